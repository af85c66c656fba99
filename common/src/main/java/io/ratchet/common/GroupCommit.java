package io.ratchet.common;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;

/**
 * Group commit: the members that queue up while earlier messages are in flight travel together as one
 * message, so one Raft log entry (one replication round, one fsync on each node) carries many writes,
 * and one ReadIndex round serves many gets. A lone member is sent at once. A client uses it for its own
 * threads' requests; the leader's front end uses it again for the batches of all its clients, so that
 * one entry carries the writes of many processes.
 *
 * <p>The hold. Closed-loop callers (threads that each send their next request when the last is
 * answered) come back together after a message is answered. Sending the first of them at once, alone,
 * splits every round in two: a message of one, then one of all the others. Worse, once callers are in
 * two groups that take turns, each group waits out the other's round, so every request costs two
 * rounds. So when a message of {@code n > 1} requests is answered, the next message waits until the
 * requests queued then plus those {@code n} are queued again (counted in commands), or until a
 * {@link Hold} has passed since the first of them arrived (a share of the last round, capped),
 * whichever comes first. After a message of one request nothing waits; after a hold that ran out
 * before its callers came back (they pause between retries, or think), the next is a quarter as long.
 * A client holds for a quarter of a round ({@link #QUARTER_ROUND}); the leader's front end, whose
 * callers are many processes whose answers reach them one by one, holds its writes for up to a whole
 * round (see {@code FrontEnd}).
 *
 * <p>Guarantees: requests are sent in the order {@link #submit} was called (in order within a
 * message, messages in order through Ratis' ordered stream), so writes apply in that order; each
 * request gets exactly its own results; when a message fails, every request in it fails with that
 * same error, as it would have alone. What the caller owes: submit only requests that passed their
 * {@code validate()}, so that a node never refuses a whole message for one bad member.
 *
 * @param <T> what is batched: a write {@link Request} or a {@link Query.Get}
 */
public final class GroupCommit<T> {
    /** Sends one message; completes with every result in order, or fails as the client maps it. */
    @FunctionalInterface
    public interface Transport {
        CompletableFuture<List<Result>> send(byte[] message);
    }

    /** How members are encoded, joined into a message, and bounded. */
    public record Format<T>(Function<T, byte[]> encode, Function<List<byte[]>, byte[]> join, ToIntFunction<T> results,
                     int framingBytes, int maxResults) {
    }

    /** Write requests: one requests message, one log entry. */
    public static final Format<Request> WRITES = new Format<>(Codec::encodeRequest, Codec::joinRequests,
            r -> r.commands().size(), Codec.REQUESTS_FRAMING_BYTES, Limits.MAX_COMMANDS_PER_REQUEST);

    /** Linearizable gets: one {@link Query.Gets} message, one ReadIndex. */
    public static final Format<Query.Get> GETS = new Format<>(Codec::encodeGet, Codec::joinGets, g -> 1,
            Codec.GETS_FRAMING_BYTES, Query.Gets.MAX_GETS);

    /**
     * How long the next message may wait for the callers of the last one: the last round divided by
     * {@code roundDivisor}, and at most {@code maxNanos} (0: no holds); a quarter of that after a hold
     * that ran out before its callers came back.
     */
    public record Hold(long maxNanos, int roundDivisor) {
        public static final Hold NONE = new Hold(0, 1);

        public Hold {
            if (maxNanos < 0 || roundDivisor < 1) {
                throw new IllegalArgumentException("a hold needs maxNanos >= 0 and roundDivisor >= 1: " + maxNanos
                        + ", " + roundDivisor);
            }
        }

        long nanos(long round) {
            return Math.min(maxNanos, round / roundDivisor);
        }
    }

    /**
     * A quarter of the last round, at most 1 ms or the system property
     * {@code ratchet.groupCommit.maxHoldMicros} (0 turns holds off): a client's hold.
     */
    public static final Hold QUARTER_ROUND = new Hold(
            TimeUnit.MICROSECONDS.toNanos(Long.getLong("ratchet.groupCommit.maxHoldMicros", 1000)), 4);

    /**
     * One daemon thread for every client's hold timers; it only ends holds that nobody filled, and it
     * ends itself after a second without one, so a closed client leaves no thread behind.
     */
    private static final ScheduledExecutorService TIMER = holdTimer();

    private static ScheduledExecutorService holdTimer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, DaemonThreads.named("ratchet-group-commit-hold"));
        timer.setKeepAliveTime(1, TimeUnit.SECONDS);
        timer.allowCoreThreadTimeOut(true);
        return timer;
    }

    private final Format<T> format;
    private final Transport transport;
    private final int messagesInFlight;
    private final Hold hold;
    private final LongSupplier nanoClock;
    /** Asked of each member as its message leaves: false withdraws it ({@link Withdrawn}); null: nothing is. */
    private final Predicate<T> stillToSend;
    private final Object lock = new Object();
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    /** The commands (results) of everything queued: what a message is bounded by, and what a hold counts. */
    private int queuedCommands;
    private int inFlight;
    /** Whether some thread holds the sender's role: only it takes batches off the queue and sends them. */
    private boolean sending;
    /** While a hold is in force, how many queued commands end it; 0 when there is no hold. */
    private int holdFor;
    /** How long the hold lasts once its first request is queued. */
    private long holdNanos;
    /** When the hold ends; 0 until its first request is queued. */
    private long holdUntil;
    private boolean timerArmed;
    /** Whether the last hold ended because its time ran out rather than filled: the next is a quarter as long. */
    private boolean lastHoldRanOut;

    /** {@code hold}: how long a message waits for the last one's callers (see the class comment). */
    public GroupCommit(Format<T> format, Transport transport, int messagesInFlight, Hold hold) {
        this(format, transport, messagesInFlight, hold, null, System::nanoTime);
    }

    /**
     * As above; {@code stillToSend} is asked of each member when its message is about to leave, outside
     * this object's lock, and a member it says no to is not sent: its result fails with {@link Withdrawn},
     * and the caller decides what becomes of it. For what a wait in the queue can settle: a conditional
     * write queued behind the entry that replaced the index it names.
     */
    public GroupCommit(Format<T> format, Transport transport, int messagesInFlight, Hold hold, Predicate<T> stillToSend) {
        this(format, transport, messagesInFlight, hold, stillToSend, System::nanoTime);
    }

    /** As above, with the clock holds are timed by (tests drive it by hand). */
    GroupCommit(Format<T> format, Transport transport, int messagesInFlight, Hold hold, Predicate<T> stillToSend,
                LongSupplier nanoClock) {
        this.stillToSend = stillToSend;
        if (messagesInFlight < 1) {
            throw new IllegalArgumentException("at least one message must be allowed in flight");
        }
        this.format = format;
        this.transport = transport;
        this.messagesInFlight = messagesInFlight;
        this.hold = hold;
        this.nanoClock = nanoClock;
    }

    /**
     * Queues a validated request and sends it as soon as a message slot is free, together with
     * whatever else is queued by then. Completes with its commands' results in order.
     */
    public CompletableFuture<List<Result>> submit(T validated) {
        byte[] encoded = format.encode().apply(validated);
        if (encoded.length + format.framingBytes() > Limits.MAX_REQUEST_BYTES) {
            // The node refuses such a message whole; refusing it here keeps it out of anyone's batch.
            return CompletableFuture.failedFuture(new InvalidCommandException("request is "
                    + (encoded.length + format.framingBytes()) + " bytes; the limit is " + Limits.MAX_REQUEST_BYTES));
        }
        Pending pending = new Pending(validated, encoded, format.results().applyAsInt(validated), new CompletableFuture<>());
        synchronized (lock) {
            queue.add(pending);
            queuedCommands += pending.commands;
            if (!claimSenderRole()) {
                return pending.result;
            }
        }
        sendWhatIsQueued();
        return pending.result;
    }

    /** Under the lock: takes the sender's role if nobody has it and a batch may be taken now. */
    private boolean claimSenderRole() {
        if (sending || !mayTake()) {
            return false;
        }
        sending = true;
        return true;
    }

    /**
     * Under the lock: whether a batch may be taken now: a free slot, work, and no hold in force. Ends
     * a hold that is filled or over; starts the clock of one whose first request has come, and arms
     * the timer that ends it.
     */
    private boolean mayTake() {
        if (inFlight >= messagesInFlight || queue.isEmpty()) {
            return false;
        }
        if (holdFor > 0 && queuedCommands < holdFor) {
            long now = nanoClock.getAsLong();
            if (holdUntil == 0) {
                holdUntil = now + holdNanos;
            }
            if (now - holdUntil < 0) {
                if (!timerArmed) {
                    timerArmed = true;
                    TIMER.schedule(this::holdOver, holdUntil - now, TimeUnit.NANOSECONDS);
                }
                return false;
            }
        }
        if (holdFor > 0) {
            lastHoldRanOut = queuedCommands < holdFor;
        }
        holdFor = 0;
        return true;
    }

    /** The hold's timer: sends what is queued when the hold ended unfilled. */
    private void holdOver() {
        boolean sender;
        synchronized (lock) {
            timerArmed = false;
            sender = claimSenderRole();
        }
        if (sender) {
            sendWhatIsQueued();
        }
    }

    /**
     * Run by the sender alone: takes batches off the head of the queue while slots are free, and
     * hands each to the transport in queue order, so messages enter Ratis' ordered stream in that
     * order. Our lock is never held while Ratis runs: Ratis completes replies under its own lock,
     * and a reply's callback takes ours, so holding ours into Ratis could deadlock.
     */
    private void sendWhatIsQueued() {
        while (true) {
            Outgoing batch;
            synchronized (lock) {
                if (!mayTake()) {
                    sending = false;
                    return;
                }
                batch = takeBatch();
                inFlight++;
            }
            Outgoing leaving = withoutWithdrawn(batch);
            if (leaving == null) {
                synchronized (lock) {
                    inFlight--;
                }
                continue;
            }
            List<byte[]> encoded = new ArrayList<>(leaving.requests().size());
            leaving.requests().forEach(p -> encoded.add(p.encoded));
            CompletableFuture<List<Result>> sent;
            try {
                sent = transport.send(format.join().apply(encoded));
            } catch (RuntimeException e) {
                sent = CompletableFuture.failedFuture(e);
            }
            // If it is complete already, finished() runs here; it sees the role taken and leaves the queue to this loop.
            sent.whenComplete((results, error) -> finished(leaving, results, error));
        }
    }

    /**
     * {@code batch} without the members {@link #stillToSend} withdraws now (their results fail with
     * {@link Withdrawn}); null when none is left.
     */
    @SuppressWarnings("unchecked")
    private Outgoing withoutWithdrawn(Outgoing batch) {
        if (stillToSend == null) {
            return batch; // the client's group commits: nothing asked on its send path
        }
        List<Pending> kept = null;
        int commands = batch.commands();
        for (int i = 0; i < batch.requests().size(); i++) {
            Pending p = batch.requests().get(i);
            if (stillToSend.test((T) p.member)) {
                if (kept != null) {
                    kept.add(p);
                }
                continue;
            }
            if (kept == null) {
                kept = new ArrayList<>(batch.requests().subList(0, i));
            }
            commands -= p.commands;
            p.result.completeExceptionally(Withdrawn.INSTANCE);
        }
        if (kept == null) {
            return batch;
        }
        return kept.isEmpty() ? null : new Outgoing(kept, commands, batch.sentAt());
    }

    /** A member {@code stillToSend} took out of its message as it left: nothing of it was sent. */
    public static final class Withdrawn extends RuntimeException {
        static final Withdrawn INSTANCE = new Withdrawn();

        private Withdrawn() {
            super("withdrawn before it was sent", null, false, false);
        }
    }

    /**
     * Under the lock: the head of the queue, up to the byte and command bounds (at least one request),
     * stamped with the time it leaves.
     */
    private Outgoing takeBatch() {
        List<Pending> batch = new ArrayList<>();
        int bytes = format.framingBytes();
        int commands = 0;
        while (!queue.isEmpty()) {
            Pending next = queue.peek();
            if (!batch.isEmpty() && (bytes + next.encoded.length > Limits.MAX_REQUEST_BYTES
                    || commands + next.commands > format.maxResults())) {
                break;
            }
            batch.add(queue.poll());
            bytes += next.encoded.length;
            commands += next.commands;
        }
        queuedCommands -= commands;
        return new Outgoing(batch, commands, nanoClock.getAsLong());
    }

    /**
     * Frees the slot, starts a hold for this message's callers (see the class comment), sends what is
     * queued if nothing holds it, then hands each request its own results.
     */
    private void finished(Outgoing batch, List<Result> results, Throwable error) {
        boolean sender;
        synchronized (lock) {
            inFlight--;
            if (batch.requests().size() > 1 && hold.maxNanos() > 0) {
                long round = nanoClock.getAsLong() - batch.sentAt();
                holdFor = Math.min(queuedCommands + batch.commands(), format.maxResults());
                // Callers who did not come back last time (a retry's pause, think time) will not now either.
                holdNanos = lastHoldRanOut ? hold.nanos(round) / 4 : hold.nanos(round);
                holdUntil = 0;
            }
            sender = claimSenderRole();
        }
        if (sender) {
            sendWhatIsQueued();
        }
        if (error == null && results.size() != batch.commands()) {
            error = new IllegalStateException("the node answered " + results.size() + " results for "
                    + batch.commands() + " commands");
        }
        if (error != null) {
            Throwable cause = Failures.unwrap(error);
            batch.requests().forEach(p -> p.result.completeExceptionally(cause));
            return;
        }
        int at = 0;
        for (Pending p : batch.requests()) {
            p.result.complete(List.copyOf(results.subList(at, at + p.commands)));
            at += p.commands;
        }
    }

    private record Pending(Object member, byte[] encoded, int commands, CompletableFuture<List<Result>> result) {
    }

    /** One message's requests, their commands (what the answer must hold) and when it was sent. */
    private record Outgoing(List<Pending> requests, int commands, long sentAt) {
    }
}
