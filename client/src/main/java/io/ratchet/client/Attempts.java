package io.ratchet.client;

import io.ratchet.client.session.Backoff;
import io.ratchet.protocol.Refusal;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The client's retry rules, in one place, decided by the typed outcome of each call and never by the
 * text of an error. One message is sent to the node believed to lead until a node answers it:
 * <ul>
 *   <li>a refusal naming the leader is followed at once;</li>
 *   <li>no leader yet, a node that failed to serve, or no answer: the next node, after a pause that
 *       grows with each failure (full jitter, so clients that failed together do not return together);</li>
 *   <li>an invalid message is final: {@link InvalidRequestException}.</li>
 * </ul>
 * Every retry is bounded by a time budget, and by {@link ClientOptions#maxAttempts()} attempts that reach
 * a node and get no answer (each may cost a whole per-attempt timeout). Refusals and refused connections
 * cost no such wait and are bounded by the budget alone, so an election (one to two seconds) cannot use
 * up the attempts before a new leader is there. Resending a write is safe only because it carries its
 * client session's sequence number (see {@link ClientSession}).
 */
final class Attempts {
    /** Pauses between attempts: 50 ms after the first failure, doubling to at most one second. */
    static final Backoff BACKOFF = new Backoff(Duration.ofMillis(50), Duration.ofSeconds(1));

    /**
     * What a message came to: the answer, and whether an earlier attempt may have reached the log (it
     * went unanswered after being delivered), which matters to a write answered "session expired".
     */
    record Delivery(byte[] results, boolean earlierMayHaveApplied) {
    }

    /** Why a message got no answer in its budget, and whether some attempt may have reached the log. */
    static final class GaveUp extends RuntimeException {
        final boolean mayHaveApplied;
        final long spentMillis;

        GaveUp(String why, boolean mayHaveApplied, long spentMillis) {
            super(why, null, false, false);
            this.mayHaveApplied = mayHaveApplied;
            this.spentMillis = spentMillis;
        }
    }

    private final FrontEndTransport transport;
    private final ClientOptions options;

    Attempts(FrontEndTransport transport, ClientOptions options) {
        this.transport = transport;
        this.options = options;
    }

    /**
     * Sends {@code message} until a node answers it, within {@code budget}. Fails with
     * {@link InvalidRequestException} or {@link GaveUp}.
     */
    CompletableFuture<Delivery> send(byte method, byte[] message, Duration budget, Duration perAttempt) {
        return send(method, () -> message, budget, perAttempt);
    }

    /**
     * As {@link #send(byte, byte[], Duration, Duration)}, with the message made afresh for each attempt
     * (a watch asks each node to wait only for what is left of its time).
     */
    CompletableFuture<Delivery> send(byte method, Supplier<byte[]> message, Duration budget, Duration perAttempt) {
        long start = System.nanoTime();
        return attempt(method, message, new State(start, start + budget.toNanos(), perAttempt));
    }

    private static final class State {
        final long start;
        final long deadline;
        final Duration perAttempt;
        int unanswered;
        int failures;
        int redirects;
        boolean mayHaveApplied;
        String lastWhy = "no attempt made";

        State(long start, long deadline, Duration perAttempt) {
            this.start = start;
            this.deadline = deadline;
            this.perAttempt = perAttempt;
        }
    }

    private CompletableFuture<Delivery> attempt(byte method, Supplier<byte[]> message, State s) {
        String node = transport.leader();
        long left = s.deadline - System.nanoTime();
        Duration timeout = Duration.ofNanos(Math.max(1, Math.min(left, s.perAttempt.toNanos())));
        return transport.call(method, node, message.get(), timeout).thenCompose(outcome -> {
            if (outcome instanceof FrontEndTransport.Answered a) {
                return CompletableFuture.completedFuture(new Delivery(a.results(), s.mayHaveApplied));
            }
            long pause;
            if (outcome instanceof FrontEndTransport.Refused r) {
                Refusal refusal = r.refusal();
                s.lastWhy = node + ": " + refusal.message();
                s.mayHaveApplied |= refusal.inDoubt();
                switch (refusal.reason()) {
                    case INVALID -> {
                        return CompletableFuture.failedFuture(new InvalidRequestException(refusal.message(), null));
                    }
                    case NOT_LEADER -> {
                        // Followed at once, unless nodes keep pointing elsewhere (views that disagree
                        // during an election): then pause like any failure.
                        transport.follow(refusal.leaderAddress());
                        pause = ++s.redirects <= transport.addresses().size() ? 0 : nextPause(s);
                    }
                    default -> {
                        transport.skip(node);
                        pause = nextPause(s);
                    }
                }
            } else {
                FrontEndTransport.Unanswered u = (FrontEndTransport.Unanswered) outcome;
                s.lastWhy = node + ": " + u.why();
                s.mayHaveApplied |= u.delivered();
                if (u.delivered()) {
                    s.unanswered++;
                }
                transport.skip(node);
                pause = nextPause(s);
            }
            if (s.unanswered >= options.maxAttempts() || System.nanoTime() + pause >= s.deadline || transport.closed()) {
                long spent = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - s.start);
                return CompletableFuture.failedFuture(new GaveUp(s.lastWhy, s.mayHaveApplied, spent));
            }
            if (pause == 0) {
                return attempt(method, message, s);
            }
            return transport.after(Duration.ofNanos(pause)).thenCompose(x -> attempt(method, message, s));
        });
    }

    private static long nextPause(State s) {
        s.failures++;
        return BACKOFF.delay(s.failures, ThreadLocalRandom.current()).toNanos();
    }
}
