package io.ratchet.recipes.session;

import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;

/**
 * The bookkeeping behind combined {@link Retry#update}s of one client: per key, the updates that
 * arrived while a put of that key was under way, in order, and who drives the next put. {@link Retry}
 * runs the rounds; this class only queues, drains and hands over, under its one lock.
 *
 * <p>One per client: every {@code Retry} made from the same {@code RatchetClient} (or, in tests, the same
 * {@link ClusterAccess}) gets the same combiner from {@link #of}, held in a weak map so a client that
 * is dropped takes its combiner along. Nothing here refers to the client, so the map never keeps it.
 *
 * <p>The protocol, per key: the first caller to {@link #enter} finds no slot, creates it and drives;
 * later callers are queued and {@linkplain Pending#awaitTurn() wait}. A driver runs rounds: it
 * {@link #drain}s every queued update (itself included), computes them in order and sends one put,
 * then settles each (done, or {@link #requeue}d at the front after a refusal). When its own update is
 * done it {@link #leave}s: the slot passes to the first queued update's caller, or is removed when none
 * is left. So a slot exists exactly while some caller drives it, the driver's fields of the slot
 * ({@link Slot#item} and the rest) are touched by one thread at a time, and every queued update goes
 * into the very next put.
 */
final class UpdateCombiner {
    private static final Map<Object, UpdateCombiner> BY_OWNER = new WeakHashMap<>();

    /** The combiner of {@code owner} (a client, or a cluster access in tests). */
    static UpdateCombiner of(Object owner) {
        synchronized (BY_OWNER) {
            return BY_OWNER.computeIfAbsent(owner, o -> new UpdateCombiner());
        }
    }

    /** By normalized key; guarded by {@code this}. */
    private final Map<String, Slot> slots = new HashMap<>();

    /** One key while updates of it are under way. */
    static final class Slot {
        final String key;
        /** Updates waiting for the next put, in order; guarded by the combiner. */
        private final ArrayDeque<Pending> queue = new ArrayDeque<>();
        /** The driving thread (null while the slot is being handed over); guarded by the combiner. */
        private Thread driver;

        // The driver's, handed from one driver to the next under the combiner's lock:
        /** The item as the last answer left it (null: absent); meaningful when {@link #known}. */
        Item item;
        /** Whether {@link #item} is the state the last put (or refusal) returned; false: read it first. */
        boolean known;
        /** Refusals of this key's puts in a row: what the backoff grows with. */
        int refusals;
        /** A wait owed before the next put (the requeued updates' backoff), or null. */
        Duration pause;
        /**
         * The wait the put being made follows (null: none): when the wait was longer than the put's round
         * trip, the state the put was computed from may have aged during it, so its refusal is news, not
         * contention, and the next put goes at once.
         */
        Duration pausedFor;

        private Slot(String key) {
            this.key = key;
        }
    }

    /** One caller's update: its function, its own budget and trail, and its outcome once settled. */
    static final class Pending {
        final String key;
        private final Class<?> type;
        private final UnaryOperator<Object> fn;
        final int maxAttempts;
        final Trail trail;
        /** Null: this caller's Retry sends no idempotency key. */
        final Duration retention;
        /** The attempt this update is in (the puts it took part in, counting the next one). */
        int attempt = 1;
        /** Refused and requeued: the next round starts its next attempt. */
        boolean retrying;
        /** Puts this caller sent as driver: the suffix of their idempotency keys. */
        long putsDriven;

        /** Completed once: with null when settled, or with the slot when this caller is to drive. */
        private final CompletableFuture<Slot> turn = new CompletableFuture<>();
        private volatile boolean done;
        private CompareExchangeResult result;
        private Throwable error;

        @SuppressWarnings("unchecked")
        <T> Pending(String key, Class<T> type, UnaryOperator<T> fn, int maxAttempts, Trail trail, Duration retention) {
            this.key = key;
            this.type = type;
            this.fn = (UnaryOperator<Object>) fn;
            this.maxAttempts = maxAttempts;
            this.trail = trail;
            this.retention = retention;
        }

        /**
         * Applies this caller's function to {@code json} (null: absent) and returns the new value's JSON,
         * checked as the put that would carry it at {@code index} with {@code metadata}.
         */
        String apply(String json, long index, String metadata) {
            Object in = json == null ? null : Json.MAPPER.convertValue(Json.parse(json), type);
            Object out = fn.apply(in);
            if (out == null) {
                throw new InvalidRequestException("the update of '" + key + "' computed null; a value must not be null", null);
            }
            String next = Json.write(out);
            ClusterSession.validate(new Command.Put(key, next, index, metadata));
            return next;
        }

        boolean isDone() {
            return done;
        }

        void succeed(CompareExchangeResult result) {
            this.result = result;
            done = true;
            turn.complete(null);
        }

        void fail(Throwable error) {
            this.error = error;
            done = true;
            turn.complete(null);
        }

        /** Waits, not interruptibly, until settled (null) or asked to drive (the slot). */
        Slot awaitTurn() {
            return turn.join();
        }

        /** The caller's result, or its error thrown. */
        CompareExchangeResult outcome() {
            if (error != null) {
                throw UpdateCombiner.<RuntimeException>sneaky(error);
            }
            return result;
        }
    }

    /**
     * Queues {@code update} under {@code normalizedKey}. Returns the slot when the caller is to drive (no
     * update of the key was under way), or null when it is to wait for its turn.
     *
     * @throws IllegalStateException when called from inside an update of the same key on the driving
     *                               thread (from an update function or a listener): it would wait for itself
     */
    synchronized Slot enter(String normalizedKey, Pending update) {
        Slot slot = slots.get(normalizedKey);
        if (slot == null) {
            slot = new Slot(normalizedKey);
            slots.put(normalizedKey, slot);
            slot.queue.add(update);
            slot.driver = Thread.currentThread();
            return slot;
        }
        if (slot.driver == Thread.currentThread()) {
            throw new IllegalStateException("update of '" + update.key + "' called while this thread drives an update of "
                    + "the same key (from an update function or a listener): it would wait for itself");
        }
        slot.queue.add(update);
        return null;
    }

    /** The caller handed the slot by {@link #leave} starts driving it. */
    synchronized void takeOver(Slot slot) {
        slot.driver = Thread.currentThread();
    }

    /** Every queued update, in order, for the next put; the queue is left empty. */
    synchronized List<Pending> drain(Slot slot) {
        List<Pending> round = new ArrayList<>(slot.queue);
        slot.queue.clear();
        return round;
    }

    /** Puts refused updates back at the front, in their order, ahead of those that arrived meanwhile. */
    synchronized void requeue(Slot slot, List<Pending> refused) {
        for (int i = refused.size() - 1; i >= 0; i--) {
            slot.queue.addFirst(refused.get(i));
        }
    }

    /** Takes {@code update} out of the queue (its caller stopped waiting for another round). */
    synchronized void withdraw(Slot slot, Pending update) {
        slot.queue.remove(update);
    }

    /** The driver is done: the first queued update's caller drives next, or the slot goes when none is left. */
    synchronized void leave(Slot slot) {
        slot.driver = null;
        Pending next = slot.queue.peekFirst();
        if (next == null) {
            slots.remove(slot.key);
        } else {
            next.turn.complete(slot);
        }
    }

    /** Updates of {@code normalizedKey} queued for the next put (the driver's own included while it is between rounds); for tests. */
    synchronized int waiting(String normalizedKey) {
        Slot slot = slots.get(normalizedKey);
        return slot == null ? 0 : slot.queue.size();
    }

    /** Keys with updates under way; for tests. */
    synchronized int activeKeys() {
        return slots.size();
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> E sneaky(Throwable t) throws E {
        throw (E) t;
    }
}
