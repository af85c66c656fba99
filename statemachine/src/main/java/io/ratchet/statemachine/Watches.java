package io.ratchet.statemachine;

import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Result;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.ratis.protocol.exceptions.ServerNotReadyException;

/**
 * Watches waiting for a key to change. A watch registers while the store is read-locked, and after
 * every applied entry (with the store write-locked) the watches that entry can have answered are
 * checked, so no change can slip between a watch's check and its registration.
 *
 * <p>Which watches an entry can have answered, the store says: a watch's answer is
 * {@link CompareExchangeStore#watched}, "the key's {@link CompareExchangeStore#lastChange} is above
 * the watch's index", and an entry moves a key's last change only by writing the key, forgetting its
 * tombstone (both in {@link CompareExchangeStore#changedKeys}), or raising the tombstone watermark, which
 * is the last change of every key with neither item nor tombstone. So after an entry only the watches
 * on its changed keys, and those whose index the watermark passed, are looked at: an entry that touched
 * no watched key costs a hash lookup per key it wrote, however many watches wait. When the whole store
 * is replaced (a snapshot installed), every watch is looked at.
 *
 * <p>Completing a watch never touches the store's state: timers live here, outside apply, and a
 * timed-out watch is answered from the store.
 */
final class Watches implements AutoCloseable {
    /** A waiting watch; identity is what tells two watches apart (the same query may wait twice). */
    private static final class Pending {
        final String id;
        final Query.Watch watch;
        final long afterIndex;
        final long sequence;
        final CompletableFuture<Result.Watched> answer;

        Pending(String id, Query.Watch watch, long afterIndex, long sequence) {
            this.id = id;
            this.watch = watch;
            this.afterIndex = afterIndex;
            this.sequence = sequence;
            this.answer = watch == null ? null : new CompletableFuture<>();
        }

        /** Sorts before every watch after {@code afterIndex}: a bound for a range of them. */
        static Pending bound(long afterIndex) {
            return new Pending(null, null, afterIndex, Long.MIN_VALUE);
        }
    }

    private static final Comparator<Pending> BY_AFTER_INDEX =
            Comparator.<Pending>comparingLong(p -> p.afterIndex).thenComparingLong(p -> p.sequence);

    /** Waiting watches by normalized key. Whoever takes a watch out of here answers it (apply or timer). */
    private final Map<String, Set<Pending>> byKey = new ConcurrentHashMap<>();
    /** The same watches by the index they wait to pass: which ones a rise of the watermark concerns. */
    private final NavigableSet<Pending> byAfterIndex = new ConcurrentSkipListSet<>(BY_AFTER_INDEX);
    private final AtomicLong sequence = new AtomicLong();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-watch-timer"));

    /** Registers a watch that has nothing to report yet; {@code onTimeout} gives the answer when it lapses. */
    CompletableFuture<Result.Watched> register(Query.Watch watch, Function<Query.Watch, Result.Watched> onTimeout) {
        Pending pending = new Pending(Keys.normalize(watch.key()), watch, watch.afterIndex(), sequence.getAndIncrement());
        byAfterIndex.add(pending);
        // Added inside compute: a timer emptying (and dropping) the key's set at the same time cannot orphan it.
        byKey.compute(pending.id, (k, set) -> {
            Set<Pending> watches = set != null ? set : ConcurrentHashMap.newKeySet();
            watches.add(pending);
            return watches;
        });
        try {
            timer.schedule(() -> {
                if (remove(pending)) {
                    pending.answer.complete(onTimeout.apply(watch));
                }
            }, watch.timeoutMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            // close() ran meanwhile and may have missed this one: fail it as close() would have.
            if (remove(pending)) {
                pending.answer.completeExceptionally(shuttingDown());
            }
        }
        return pending.answer;
    }

    /**
     * Called with the store write-locked right after it applied an entry: takes out the watches that
     * entry answered (those on its {@link CompareExchangeStore#changedKeys changed keys}, and those a
     * rise of the tombstone watermark concerns), and returns the actions that answer them, to run once
     * the lock is released. Each candidate is judged by {@link CompareExchangeStore#watched}.
     */
    List<Runnable> fired(CompareExchangeStore store) {
        if (byKey.isEmpty()) {
            return List.of();
        }
        List<Runnable> actions = new ArrayList<>(0);
        List<String> changed = store.changedKeys();
        for (int i = 0, n = changed.size(); i < n; i++) {
            Set<Pending> watches = byKey.get(changed.get(i));
            if (watches != null) {
                for (Pending p : watches) {
                    fire(p, store, actions);
                }
            }
        }
        long before = store.watermarkBefore();
        long after = store.tombstoneWatermark();
        if (after > before) {
            // Keys with neither item nor tombstone changed last at the watermark now: at most these can care.
            for (Pending p : byAfterIndex.subSet(Pending.bound(before), Pending.bound(after))) {
                fire(p, store, actions);
            }
        }
        return actions;
    }

    /**
     * Called with the store write-locked after it was replaced wholesale (a snapshot installed): takes
     * out every watch the new store answers, and returns the actions that answer them.
     */
    List<Runnable> firedByAnyChange(CompareExchangeStore store) {
        List<Runnable> actions = new ArrayList<>(0);
        for (Pending p : byAfterIndex) {
            fire(p, store, actions);
        }
        return actions;
    }

    private void fire(Pending p, CompareExchangeStore store, List<Runnable> actions) {
        Result.Watched now = store.watched(p.watch);
        if (now.changed() && remove(p)) {
            actions.add(() -> p.answer.complete(now));
        }
    }

    /** Takes {@code pending} out; true for the one caller that did, who then answers it. */
    private boolean remove(Pending pending) {
        boolean[] removed = {false};
        byKey.computeIfPresent(pending.id, (k, set) -> {
            removed[0] = set.remove(pending);
            return set.isEmpty() ? null : set;
        });
        if (removed[0]) {
            byAfterIndex.remove(pending);
        }
        return removed[0];
    }

    /** Watches waiting now (for tests). */
    int size() {
        return byAfterIndex.size();
    }

    /**
     * Fails every waiting watch as "node not serving", so shutting down never waits on one. Not an
     * "unchanged" answer: that would claim this node had seen no change, and the client instead asks
     * another node, from the same index.
     */
    @Override
    public void close() {
        timer.shutdownNow();
        for (Pending p : byAfterIndex) {
            if (remove(p)) {
                p.answer.completeExceptionally(shuttingDown());
            }
        }
    }

    private static ServerNotReadyException shuttingDown() {
        return new ServerNotReadyException("the node is shutting down; ask another node");
    }
}
