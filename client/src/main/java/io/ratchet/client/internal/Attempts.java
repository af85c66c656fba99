package io.ratchet.client.internal;

import io.ratchet.client.AuthenticationException;
import io.ratchet.client.Backoff;
import io.ratchet.client.ClientEvents;
import io.ratchet.client.ClientOptions;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.PermissionDeniedException;
import io.ratchet.client.RatchetException;
import io.ratchet.protocol.Refusal;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's retry rules, in one place, decided by the typed outcome of each call and never by the
 * text of an error. One message is sent to the node believed to lead until a node answers it:
 * <ul>
 *   <li>a refusal naming the leader is followed at once, and so is the leader a follower names when it
 *       serves a read (later calls go there);</li>
 *   <li>a leader not ready yet that names itself is asked again after a pause, for at most
 *       {@link #SILENCE}; then like no leader;</li>
 *   <li>no leader yet, a node that failed to serve, or no answer: the next node, after a pause that
 *       grows with each failure (full jitter, so clients that failed together do not return together);</li>
 *   <li>an invalid message is final: {@link InvalidRequestException};</li>
 *   <li>a write or read unanswered for a few typical round trips is hedged: another node is asked who
 *       leads, and when it names a node other than the one holding the call, the message goes there too,
 *       and the first answer wins ({@link #hedge}).</li>
 * </ul>
 * Every retry is bounded by a time budget, and by {@link ClientOptions#maxAttempts()} attempts that reach
 * a node and get no answer (each may cost a whole per-attempt timeout). Refusals and refused connections
 * cost no such wait and are bounded by the budget alone, so an election (one to two seconds) cannot use
 * up the attempts before a new leader is there. A failed TLS handshake at every node ends the retries at
 * once: it says the client's TLS files and the cluster's do not fit, which no wait changes. Resending a
 * write is safe only because it carries its client session's sequence number (see {@link ClientSession}).
 */
public final class Attempts {
    /** At debug, every attempt that ended without an answer and every hedge's answer: what a failover cost a client. */
    private static final Logger LOG = LoggerFactory.getLogger(Attempts.class);
    /**
     * Pauses between attempts: 20 ms after the first failure, doubling to at most 100 ms. Short, because
     * what it waits out is mostly an election, and the pause after a new leader is ready is part of
     * every failover's gap; a refusal costs a node little, and the budget bounds the traffic.
     */
    static final Backoff BACKOFF = new Backoff(Duration.ofMillis(20), Duration.ofMillis(100));
    /**
     * An attempt waits at least this long for its answer before the next node is tried: above any
     * healthy round trip here, and no longer than the followers need to notice a silent leader.
     */
    static final Duration MIN_ATTEMPT = Duration.ofMillis(300);
    /**
     * How long a node that left an attempt unanswered is believed silent: hints naming it are not
     * followed meanwhile. About the longest election; after it, a leader that was only slow is tried again.
     */
    static final Duration SILENCE = Duration.ofSeconds(1);
    /** How many typical round trips an attempt waits before it counts the node as silent. */
    private static final int TYPICAL_ROUNDS = 10;
    /**
     * An attempt unanswered this long is hedged ({@link #hedged}), or after {@value #HEDGE_ROUNDS} typical
     * round trips when that is longer: past a healthy round trip under load, and short beside the time a
     * leader that handed over keeps its calls.
     */
    static final Duration MIN_HEDGE = Duration.ofMillis(100);
    private static final int HEDGE_ROUNDS = 4;

    /**
     * What a message came to: the answer, and whether an earlier attempt may have reached the log (it
     * went unanswered after being delivered), which matters to a write answered "session expired".
     */
    public record Delivery(byte[] results, boolean earlierMayHaveApplied) {
    }

    /** Why a message got no answer in its budget, and whether some attempt may have reached the log. */
    public static final class GaveUp extends RuntimeException {
        public final boolean mayHaveApplied;
        public final long spentMillis;

        public GaveUp(String why, boolean mayHaveApplied, long spentMillis) {
            super(why, null, false, false);
            this.mayHaveApplied = mayHaveApplied;
            this.spentMillis = spentMillis;
        }
    }

    private final Transport transport;
    private final ClientOptions options;
    /** A moving average of how long answered calls took: what "no answer yet" is judged against. */
    private volatile long typicalNanos = TimeUnit.MILLISECONDS.toNanos(5);

    public Attempts(Transport transport, ClientOptions options) {
        this.transport = transport;
        this.options = options;
    }

    /** Where the resends and hedges are reported (the transport's). */
    public ClientEvents events() {
        return transport.events();
    }

    /**
     * Sends {@code message} until a node answers it, within {@code budget}. Fails with
     * {@link InvalidRequestException} or {@link GaveUp}.
     */
    public CompletableFuture<Delivery> send(byte method, byte[] message, Duration budget, Duration perAttempt) {
        return send(method, () -> message, budget, perAttempt, true);
    }

    /**
     * As {@link #send(byte, byte[], Duration, Duration)}, with the message made afresh for each attempt
     * (a watch asks each node to wait only for what is left of its time).
     *
     * @param adaptive when true (writes, reads), {@code perAttempt} is only the longest an attempt waits:
     *                 an attempt waits {@value #TYPICAL_ROUNDS} typical round trips (at least
     *                 {@link #MIN_ATTEMPT}), doubled after each attempt that went unanswered, so a
     *                 paused or cut-off leader costs about half a second, not the whole timeout; when
     *                 false (a watch, which waits by design) every attempt may take {@code perAttempt}
     */
    public CompletableFuture<Delivery> send(byte method, Supplier<byte[]> message, Duration budget, Duration perAttempt,
                                     boolean adaptive) {
        long start = System.nanoTime();
        return attempt(method, message, new State(start, start + budget.toNanos(), perAttempt, adaptive));
    }

    private static final class State {
        final long start;
        final long deadline;
        final Duration perAttempt;
        final boolean adaptive;
        int unanswered;
        int failures;
        int redirects;
        /** Nodes that left an attempt of this operation unanswered (dead, paused, cut off), and since when. */
        final Map<String, Long> silent = new HashMap<>();
        /** The node that last named itself a leader not ready yet in this operation, and since when. */
        String unready;
        long unreadySince;
        /** Nodes whose TLS handshake failed in this operation: when every node's did, waiting mends nothing. */
        final Set<String> tlsRefused = new HashSet<>();
        boolean mayHaveApplied;
        String lastWhy = "no attempt made";

        State(long start, long deadline, Duration perAttempt, boolean adaptive) {
            this.start = start;
            this.deadline = deadline;
            this.perAttempt = perAttempt;
            this.adaptive = adaptive;
        }
    }

    private CompletableFuture<Delivery> attempt(byte method, Supplier<byte[]> message, State s) {
        String node = target(s);
        long sent = System.nanoTime();
        long left = s.deadline - sent;
        Duration timeout = Duration.ofNanos(Math.max(1, Math.min(left, attemptNanos(s))));
        byte[] bytes = message.get();
        Hedge hedge = new Hedge(transport.call(method, node, bytes, timeout));
        if (s.adaptive) {
            hedge(hedge, method, node, bytes, timeout);
        }
        return hedge.first.thenCompose(outcome -> {
            if (outcome instanceof Transport.Answered a && hedge.answeredBy != null) {
                transport.follow(hedge.answeredBy);
                return CompletableFuture.completedFuture(new Delivery(a.results(), s.mayHaveApplied));
            }
            if (outcome instanceof Transport.Answered a) {
                if (s.adaptive) {
                    long took = System.nanoTime() - sent;
                    typicalNanos += (took - typicalNanos) / 8;
                }
                if (a.leader() != null && !silentNow(s, a.leader())) {
                    // A follower served it and named the leader: the next call goes there.
                    transport.follow(a.leader());
                }
                return CompletableFuture.completedFuture(new Delivery(a.results(), s.mayHaveApplied));
            }
            long pause;
            if (outcome instanceof Transport.Refused r) {
                Refusal refusal = r.refusal();
                s.lastWhy = node + ": " + refusal.message();
                s.mayHaveApplied |= refusal.inDoubt();
                RatchetException ending = ending(refusal);
                if (ending != null) {
                    return CompletableFuture.failedFuture(ending);
                }
                if (refusal.reason() == Refusal.Reason.NOT_LEADER) {
                    if (silentNow(s, refusal.leaderAddress())) {
                        // A follower still names the leader that just went silent on us: it has
                        // not noticed yet. Ask the followers again shortly, until they name the
                        // new one; going back would wait out another attempt on a silent node.
                        pause = nextPause(s);
                    } else {
                        // Followed at once, unless nodes keep pointing elsewhere (views that
                        // disagree during an election): then pause like any failure.
                        transport.follow(refusal.leaderAddress());
                        pause = ++s.redirects <= transport.addresses().size() ? 0 : nextPause(s);
                    }
                } else if (refusal.reason() == Refusal.Reason.NO_LEADER && refusal.leaderAddress() != null
                        && !unreadyTooLong(s, refusal.leaderAddress())) {
                    // A leader just elected, not ready yet, names itself: it serves in a moment. Moving on
                    // would reach a follower that sends the call back there, or a node that is down.
                    transport.follow(refusal.leaderAddress());
                    pause = nextPause(s);
                } else {
                    transport.skip(node);
                    pause = nextPause(s);
                }
            } else {
                Transport.Unanswered u = (Transport.Unanswered) outcome;
                s.lastWhy = node + ": " + u.why();
                s.mayHaveApplied |= u.delivered();
                if (u.tlsRefused() && s.tlsRefused.add(node) && s.tlsRefused.containsAll(transport.addresses())) {
                    long spent = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - s.start);
                    return CompletableFuture.failedFuture(new GaveUp("every node refused the TLS handshake; " + s.lastWhy,
                            s.mayHaveApplied, spent));
                }
                if (u.delivered()) {
                    s.unanswered++;
                }
                s.silent.put(node, System.nanoTime());
                transport.skip(node);
                pause = nextPause(s);
            }
            if (LOG.isDebugEnabled()) {
                LOG.debug("call {}: attempt at {} ended after {} ms ({}); typical {} ms, {} paused after so far, next in {} ms",
                        Integer.toHexString(System.identityHashCode(s)), node,
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent), s.lastWhy,
                        TimeUnit.NANOSECONDS.toMillis(typicalNanos), s.failures, TimeUnit.NANOSECONDS.toMillis(pause));
            }
            if (s.unanswered >= options.maxAttempts() || System.nanoTime() + pause >= s.deadline || transport.closed()) {
                long spent = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - s.start);
                return CompletableFuture.failedFuture(new GaveUp(s.lastWhy, s.mayHaveApplied, spent));
            }
            transport.events().resend();
            if (pause == 0) {
                return attempt(method, message, s);
            }
            return transport.after(Duration.ofNanos(pause)).thenCompose(x -> attempt(method, message, s));
        });
    }

    /**
     * Races the attempt's call to {@code node} with a hedge: when no answer has come after
     * {@link #hedgeNanos}, another node is asked the same message. A follower refuses it naming the
     * leader; when that is not {@code node} (leadership moved while {@code node} holds the call: a leader
     * that handed over because its disk stalled or it was starved of CPU, and answers late if at all), the
     * message goes there, and the first answer wins. Sending a write twice is safe for the reason any
     * resend is: its session sequence number applies it once, and the second copy is answered with the
     * first one's result. A hedge that learns nothing (the follower names {@code node} too) ends quietly,
     * having cost one refusal; the call goes on as if there were none.
     */
    private void hedge(Hedge hedge, byte method, String node, byte[] bytes, Duration timeout) {
        CompletableFuture<Void> due = transport.deadline(Duration.ofNanos(hedgeNanos()));
        // Most calls are answered long before: their timer goes, not to fire for nothing.
        hedge.first.whenComplete((outcome, e) -> due.cancel(false));
        due.thenRun(() -> {
            String other = otherThan(node);
            if (hedge.first.isDone() || other == null) {
                return;
            }
            transport.events().hedge();
            transport.call(method, other, bytes, timeout).thenAccept(outcome -> {
                if (LOG.isDebugEnabled()) {
                    LOG.debug("hedge of a call held by {}: {} answered {}", node, other, outcome);
                }
                if (outcome instanceof Transport.Answered) {
                    hedge.answer(outcome, other);
                } else if (outcome instanceof Transport.Refused r && r.refusal().reason() == Refusal.Reason.NOT_LEADER
                        && r.refusal().leaderAddress() != null && !r.refusal().leaderAddress().equals(node)
                        && !hedge.first.isDone()) {
                    String leader = r.refusal().leaderAddress();
                    transport.call(method, leader, bytes, timeout).thenAccept(again -> {
                        if (again instanceof Transport.Answered) {
                            hedge.answer(again, leader);
                        }
                    });
                }
            });
        });
    }

    /** An attempt's call and its hedge: the first answer of either, and which node gave it when the hedge did. */
    private static final class Hedge {
        final CompletableFuture<Transport.Outcome> first = new CompletableFuture<>();
        volatile String answeredBy;

        Hedge(CompletableFuture<Transport.Outcome> call) {
            call.whenComplete((outcome, e) -> called(outcome));
        }

        private synchronized void called(Transport.Outcome outcome) {
            first.complete(outcome);
        }

        synchronized void answer(Transport.Outcome answered, String by) {
            if (!first.isDone()) {
                answeredBy = by;
                first.complete(answered);
            }
        }
    }

    /** How long an attempt waits before it is hedged: a few typical round trips, at least {@link #MIN_HEDGE}. */
    private long hedgeNanos() {
        return Math.max(MIN_HEDGE.toNanos(), HEDGE_ROUNDS * typicalNanos);
    }

    /** A node other than {@code node}: the next in the list after it. */
    private String otherThan(String node) {
        List<String> addresses = transport.addresses();
        int at = addresses.indexOf(node);
        return addresses.size() < 2 ? null : addresses.get((at + 1) % addresses.size());
    }

    /**
     * Where the next attempt goes: the node believed to lead, unless it went silent on this operation
     * within {@link #SILENCE}; then the first node that did not (a node cut off from the others still
     * accepts connections, and going back to it would wait out another attempt), or, when every node
     * went silent, the one believed to lead.
     */
    private String target(State s) {
        String leader = transport.leader();
        if (!silentNow(s, leader)) {
            return leader;
        }
        for (String node : transport.addresses()) {
            if (!silentNow(s, node)) {
                transport.follow(node);
                return node;
            }
        }
        return leader;
    }

    private static boolean silentNow(State s, String node) {
        Long since = s.silent.get(node);
        return since != null && System.nanoTime() - since < SILENCE.toNanos();
    }

    /**
     * Whether {@code leader} has called itself a leader not ready yet for longer than {@link #SILENCE} in
     * this operation. A new leader is ready once its first entry commits, a round or two; one that stays
     * unready cannot commit (it lost its majority, or a release before Ratchet's own check kept a division
     * Ratis had closed), and the other nodes may know the leader that replaced it: the call moves on.
     */
    private static boolean unreadyTooLong(State s, String leader) {
        long now = System.nanoTime();
        if (!leader.equals(s.unready)) {
            s.unready = leader;
            s.unreadySince = now;
            return false;
        }
        return now - s.unreadySince > SILENCE.toNanos();
    }

    /** How long this attempt waits for its answer (see {@link #send(byte, Supplier, Duration, Duration, boolean)}). */
    private long attemptNanos(State s) {
        long cap = s.perAttempt.toNanos();
        if (!s.adaptive) {
            return cap;
        }
        long typical = Math.max(MIN_ATTEMPT.toNanos(), TYPICAL_ROUNDS * typicalNanos);
        return Math.min(cap, typical << Math.min(s.unanswered, 8));
    }

    private static long nextPause(State s) {
        s.failures++;
        return BACKOFF.delay(s.failures, ThreadLocalRandom.current()).toNanos();
    }

    /**
     * The failure a refusal ends a call with, or null when another node, or a later attempt, may serve it
     * (no leader yet, not the leader, a node that cannot serve now).
     */
    public static RatchetException ending(Refusal refusal) {
        return switch (refusal.reason()) {
            case INVALID -> new InvalidRequestException(refusal.message(), null);
            case UNAUTHENTICATED -> new AuthenticationException(refusal.message());
            case FORBIDDEN -> new PermissionDeniedException(refusal.message());
            case NOT_LEADER, NO_LEADER, UNAVAILABLE -> null;
        };
    }
}
