package io.ratchet.client;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * What one client did, as it happens: each operation with its outcome and time, each resend, each
 * leader change it followed, each hedged send, each session it opened, and the locks the recipes took
 * over it. A {@link Listener} hears them; with none subscribed, an operation pays one volatile read.
 * Read it with {@link RatchetClient#events()}; {@code io.ratchet.client.micrometer.RatchetClientMetrics}
 * turns it into Micrometer meters.
 *
 * <p>Beside the listeners, it keeps counts that need no listener: resends, leader changes followed,
 * hedges, sessions opened, and the locks this client holds now. Thread-safe.
 */
public final class ClientEvents {
    /** The outcome of a write that applied. */
    public static final String APPLIED = "applied";
    /** The outcome of a read that was answered. */
    public static final String OK = "ok";

    /**
     * How an operation that failed ended: its {@link ErrorCode}'s name, the one table every failure is named
     * from (the command line's exit codes and the HTTP API's {@code code} name the same ones), such as
     * {@code condition_failed}, {@code cluster_unavailable} or {@code unknown_outcome}.
     */
    public static String outcomeOf(Throwable error) {
        return ErrorCode.of(error).wireName();
    }

    /**
     * Hears a client's events; every method has an empty default. Called on the client's threads, its network
     * threads among them: return quickly, and never wait there for another call of the client.
     */
    public interface Listener {
        /**
         * An operation ended.
         *
         * @param operation the method, as the {@code operation} tag: put, delete, transaction, request, get,
         *                  getAll, list, getDocument, watch
         * @param outcome   {@link #APPLIED}, {@link #OK}, or the failure's {@link ErrorCode} name; a write whose
         *                  condition failed (a normal answer) is {@code condition_failed}
         * @param nanos     from the call to its end, retries included
         */
        default void operation(String operation, String outcome, long nanos) {
        }

        /** A message was sent again: to the next node, or to the leader a node named. */
        default void resent() {
        }

        /** The client learnt of a new leader and sends there now. */
        default void followedLeader() {
        }

        /** An attempt went unanswered long enough that another node was asked the same message. */
        default void hedged() {
        }

        /** A client session (what makes a resent write apply once) was opened. */
        default void sessionOpened() {
        }

        /**
         * A lock acquire ended.
         *
         * @param kind     the recipe: lock, fairLock or semaphore
         * @param acquired whether it got the lock
         * @param waitNanos from the call until it got the lock or gave up
         */
        default void lockAcquire(String kind, boolean acquired, long waitNanos) {
        }
    }

    private static final Listener[] NONE = new Listener[0];

    private volatile Listener[] listeners = NONE;
    private final LongAdder resent = new LongAdder();
    private final LongAdder followedLeader = new LongAdder();
    private final LongAdder hedged = new LongAdder();
    private final LongAdder sessionsOpened = new LongAdder();
    /** How many grants are remembered before the lapsed ones are dropped unasked. */
    private static final int MAX_HELD = 1024;
    /** The locks held: {@code kind/name/fencing token} to when its lease ends by this process's clock. */
    private final Map<String, Long> held = new ConcurrentHashMap<>();
    private final LongSupplier nanoClock;

    public ClientEvents() {
        this(System::nanoTime);
    }

    /** With {@code nanoClock} in place of {@link System#nanoTime()}, for tests. */
    public ClientEvents(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
    }

    public synchronized void subscribe(Listener listener) {
        Listener[] now = Arrays.copyOf(listeners, listeners.length + 1);
        now[now.length - 1] = listener;
        listeners = now;
    }

    public synchronized void unsubscribe(Listener listener) {
        listeners = Arrays.stream(listeners).filter(l -> l != listener).toArray(Listener[]::new);
    }

    // ---- counts

    public long resent() {
        return resent.sum();
    }

    public long followedLeader() {
        return followedLeader.sum();
    }

    public long hedged() {
        return hedged.sum();
    }

    public long sessionsOpened() {
        return sessionsOpened.sum();
    }

    /** The locks this client holds now: acquired, not released, not lost, and within their lease by this process's clock. */
    public int locksHeld() {
        long now = nanoClock.getAsLong();
        held.values().removeIf(ends -> ends - now <= 0);
        return held.size();
    }

    /** How many grants are remembered now, lapsed ones included (for tests of the bound). */
    int remembered() {
        return held.size();
    }

    // ---- what the client and the recipes report

    /**
     * Reports {@code operation}'s end to the listeners, with its outcome from {@code outcome} (for a
     * result) or from the error's code. Returns {@code call} itself.
     */
    public <T> CompletableFuture<T> timed(String operation, CompletableFuture<T> call, Function<T, String> outcome) {
        Listener[] now = listeners;
        if (now.length == 0) {
            return call;
        }
        long start = nanoClock.getAsLong();
        call.whenComplete((result, error) -> {
            String o = error == null ? outcome.apply(result) : outcomeOf(error);
            long took = nanoClock.getAsLong() - start;
            for (Listener l : now) {
                l.operation(operation, o, took);
            }
        });
        return call;
    }

    public void resend() {
        resent.increment();
        for (Listener l : listeners) {
            l.resent();
        }
    }

    public void leaderFollowed() {
        followedLeader.increment();
        for (Listener l : listeners) {
            l.followedLeader();
        }
    }

    public void hedge() {
        hedged.increment();
        for (Listener l : listeners) {
            l.hedged();
        }
    }

    public void sessionOpen() {
        sessionsOpened.increment();
        for (Listener l : listeners) {
            l.sessionOpened();
        }
    }

    /**
     * A lock acquire of {@code kind} ended after {@code waitNanos}; when it got {@code name} with
     * {@code fencingToken}, the lock counts as held until {@link #lockEnded}, or until {@code lease} after
     * {@code sentNanos} (this process's {@link System#nanoTime()} when the grant's write was sent).
     */
    public void lockAcquire(String kind, String name, long fencingToken, long sentNanos, Duration lease, boolean acquired,
                            long waitNanos) {
        if (acquired) {
            held.put(heldKey(kind, name, fencingToken), sentNanos + lease.toNanos());
            if (held.size() > MAX_HELD) {
                locksHeld(); // grants whose lease ran out unreleased go, even when nobody reads the count
            }
        }
        for (Listener l : listeners) {
            l.lockAcquire(kind, acquired, waitNanos);
        }
    }

    /** A held lock was renewed: it counts as held until {@code lease} after {@code sentNanos}. */
    public void lockRenewed(String kind, String name, long fencingToken, long sentNanos, Duration lease) {
        held.computeIfPresent(heldKey(kind, name, fencingToken), (k, ends) -> sentNanos + lease.toNanos());
    }

    /** A held lock was released, or found lost; a {@code fencingToken} of 0 (not known) ends every grant of {@code name}. */
    public void lockEnded(String kind, String name, long fencingToken) {
        if (fencingToken == 0) {
            String prefix = kind + '/' + name + '/';
            held.keySet().removeIf(k -> k.startsWith(prefix));
        } else {
            held.remove(heldKey(kind, name, fencingToken));
        }
    }

    private static String heldKey(String kind, String name, long fencingToken) {
        return kind + '/' + name + '/' + fencingToken;
    }
}
