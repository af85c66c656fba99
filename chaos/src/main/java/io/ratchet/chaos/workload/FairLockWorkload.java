package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.checker.LockChecker;
import io.ratchet.chaos.history.History;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetException;
import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.FairLocks;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.Lock;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.QueueEntry;
import io.ratchet.recipes.lock.QueueLease;
import io.ratchet.recipes.lock.Ticket;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Processes queue for one fair lock ({@link FairLocks}): each joins the queue, waits its turn for a
 * random 0.2..2 s, and when it comes writes to the lock's fenced resource under its token, holds a moment
 * and releases. {@link LockChecker#fair()} decides: every check of the locks workload, and first come,
 * first served among waiters whose places were live.
 *
 * <p>An acquire is one recorded operation in two calls: {@link FairLocks#enqueue} (given
 * {@link #JOIN_TIMEOUT}; a join without an answer by then is an unknown outcome, and given back should it
 * land after) and {@link FairLocks#await}, which ends by its wait plus the watch slack. So an acquire ends
 * well within its {@link #LEASE}, counted from its invocation, which the checker's lease windows and its
 * late-grant check rely on. Its output says the place it queued at, granted or not, how long after the
 * acquire began the join was answered ({@code joined_us}: the availability measure counts that answer as a
 * write served), and whether it lost that place ({@code "lost":true}); a waiter that gave up otherwise held
 * it, live, until then. A process
 * whose acquire got no answer reads the queue to learn whether it holds the lock, as {@link LockWorkload} says.
 */
public final class FairLockWorkload extends LockWorkload {
    /** One lock, so that its queue grows. */
    static final String LOCK = "fair-q";
    /** Longer than the longest acquire (join, wait and slack), short enough that an abandoned place lapses in a run. */
    static final Duration LEASE = Duration.ofSeconds(6);
    static final Duration JOIN_TIMEOUT = Duration.ofMillis(1500);
    static final int MIN_WAIT_MS = 200;
    static final int MAX_WAIT_MS = 2000;
    /** How long a holder keeps the lock after its writes, at most: long enough for a queue to form. */
    private static final int HOLD_MS = 40;

    public FairLockWorkload() {
        super("f", LEASE);
    }

    @Override
    public String name() {
        return LockChecker.FAIR_WORKLOAD;
    }

    @Override
    public List<String> keyPrefixes() {
        return List.of(key(LOCK), FencedResource.PREFIX + LOCK);
    }

    @Override
    String key(String name) {
        return FairLocks.PREFIX + name + "/";
    }

    @Override
    Lock<QueueLease> lock(RatchetClient client, String owner, String name) {
        return locks(client, owner).lock(name);
    }

    private static FairLocks locks(RatchetClient client, String owner) {
        return new FairLocks(client, LockOptions.defaults().withOwner(owner));
    }

    /**
     * What one acquire came to: the lease if granted, where it queued (place and key), whether it lost that
     * place, and how long after the acquire began the join was answered (microseconds; 0 without a join).
     */
    private record Acquired(Optional<QueueLease> lease, long place, String key, boolean lost, long joinedMicros) {
    }

    @Override
    Attempt acquire(ClientProcess process, String owner) {
        FairLocks locks = locks(process.client(), owner);
        int wait = MIN_WAIT_MS + process.random().nextInt(MAX_WAIT_MS - MIN_WAIT_MS + 1);
        return recordAcquire(process, LOCK, acquireInput(owner).put("wait_ms", wait),
                () -> acquire(locks, Duration.ofMillis(wait)), FairLockWorkload::output,
                a -> a.lease().map(l -> new Held(LOCK, owner, l.fencingToken(), l.currentIndex())));
    }

    /**
     * Joins, then waits. Any error but a refusal of the input is an unknown outcome (a place may have been
     * taken), so it is passed on as one, never as {@code ClusterUnavailableException}, which the history
     * would record as certainly without effect.
     */
    private static Acquired acquire(FairLocks locks, Duration wait) {
        long began = System.nanoTime();
        CompletableFuture<Ticket> joining = locks.enqueueAsync(LOCK, LEASE);
        Ticket ticket;
        try {
            ticket = joining.get(JOIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            joining.thenAccept(late -> locks.leaveAsync(late)); // should it land after all, give it back
            throw new IllegalStateException("joining the queue got no answer in " + JOIN_TIMEOUT.toMillis() + " ms");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof LeaseLostException) {
                return new Acquired(Optional.empty(), 0, null, true, 0); // answered too late and given back
            }
            throw unknown(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
        long joined = (System.nanoTime() - began) / 1_000;
        try {
            return new Acquired(locks.await(ticket, wait), ticket.place(), ticket.key(), false, joined);
        } catch (LeaseLostException e) {
            return new Acquired(Optional.empty(), ticket.place(), ticket.key(), true, joined);
        } catch (RuntimeException e) {
            throw unknown(e);
        }
    }

    private static RuntimeException unknown(Throwable e) {
        if (e instanceof InvalidRequestException invalid) {
            return invalid;
        }
        return new IllegalStateException("after joining the queue: " + (e instanceof RatchetException ? e.getMessage() : e), e);
    }

    /**
     * Reads the queue. The owner holds the lock once it heads the queue and its turn write (its token)
     * landed; a place it has anywhere else is given back (nobody awaits it any more).
     */
    @Override
    Outcome<Found> find(ClientProcess process, String name, String owner) {
        FairLocks locks = locks(process.client(), owner);
        return process.read("holder", key(name), History.object().put("owner", owner), () -> locks.queue(name),
                FairLockWorkload::head).map(queue -> {
                    Optional<QueueEntry> ours = queue.stream().filter(e -> e.owner().equals(owner)).findFirst();
                    boolean heads = ours.isPresent() && queue.get(0) == ours.get() && ours.get().holding();
                    return new Found(ours.map(e -> new Held(name, e.owner(), e.fencingToken(), e.index())), heads);
                });
    }

    @Override
    void use(ClientProcess process, Held held) {
        writeFenced(process, held);
        sleep(process.random().nextInt(HOLD_MS + 1));
    }

    @Override
    public void finalReads(ClientProcess reader) {
        finalRead(reader, FencedResource.PREFIX + LOCK, "token");
    }

    private static JsonNode output(Acquired a) {
        ObjectNode o = History.object().put("granted", a.lease().isPresent());
        if (a.place() > 0) {
            o.put("queued", a.place()).put("entry", entry(a.key())).put("joined_us", a.joinedMicros());
        }
        a.lease().ifPresent(l -> o.put("token", l.fencingToken()));
        if (a.lost()) {
            o.put("lost", true);
        }
        return o;
    }

    /** The queue's head, if it holds the lock (its turn write landed), where it queued, and the queue's length. */
    private static JsonNode head(List<QueueEntry> queue) {
        ObjectNode o = History.object().put("length", queue.size());
        if (!queue.isEmpty() && queue.get(0).holding()) {
            QueueEntry h = queue.get(0);
            o.put("holder", h.owner()).put("token", h.fencingToken()).put("queued", h.place()).put("entry", entry(h.key()));
        }
        return o;
    }

    @Override
    public Checker checker() {
        return LockChecker.fair();
    }
}
