package io.ratchet.statemachine;

import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.ratis.protocol.exceptions.ServerNotReadyException;

/**
 * Watches waiting for a key to change. A watch registers while the store is read-locked and is
 * checked after every applied entry, so no change can slip between its check and its registration.
 * Completing a watch never touches the store's state: timers live here, outside apply.
 */
final class Watches implements AutoCloseable {
    private record Pending(Query.Watch watch, CompletableFuture<Result.Watched> answer) {
    }

    private final Map<String, Set<Pending>> byKey = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-watch-timer"));

    /** Registers a watch that has nothing to report yet; {@code onTimeout} gives the answer when it lapses. */
    CompletableFuture<Result.Watched> register(Query.Watch watch, Function<Query.Watch, Result.Watched> onTimeout) {
        Pending pending = new Pending(watch, new CompletableFuture<>());
        String id = Keys.normalize(watch.key());
        byKey.computeIfAbsent(id, k -> ConcurrentHashMap.newKeySet()).add(pending);
        timer.schedule(() -> {
            if (remove(id, pending)) {
                pending.answer().complete(onTimeout.apply(watch));
            }
        }, watch.timeoutMillis(), TimeUnit.MILLISECONDS);
        return pending.answer();
    }

    /**
     * Called with the store locked after an entry applied: takes out the watches whose key changed and
     * returns the actions that answer them, to run once the lock is released.
     */
    List<Runnable> fired(Function<Query.Watch, Result.Watched> answer) {
        if (byKey.isEmpty()) {
            return List.of();
        }
        List<Runnable> actions = new ArrayList<>();
        for (Map.Entry<String, Set<Pending>> e : byKey.entrySet()) {
            for (Pending p : e.getValue()) {
                Result.Watched now = answer.apply(p.watch());
                if (now.changed() && remove(e.getKey(), p)) {
                    actions.add(() -> p.answer().complete(now));
                }
            }
        }
        return actions;
    }

    private boolean remove(String id, Pending pending) {
        boolean[] removed = {false};
        byKey.computeIfPresent(id, (k, set) -> {
            removed[0] = set.remove(pending);
            return set.isEmpty() ? null : set;
        });
        return removed[0];
    }

    /**
     * Fails every waiting watch as "node not serving", so shutting down never waits on one. Not an
     * "unchanged" answer: that would claim this node had seen no change, and the client instead asks
     * another node, from the same index.
     */
    @Override
    public void close() {
        timer.shutdownNow();
        byKey.values().forEach(set -> set.forEach(p -> p.answer().completeExceptionally(
                new ServerNotReadyException("the node is shutting down; ask another node"))));
        byKey.clear();
    }
}
