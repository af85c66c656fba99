package io.ratchet.recipes.lock;

import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.WatchResult;
import io.ratchet.common.Failures;
import io.ratchet.protocol.Item;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * How a {@link LeaseQueue} waiter sleeps: on watches of the entries ahead of it that can bring its turn
 * nearer (its predecessor, or the holders), never on the crowd, so one release wakes one waiter. A watch
 * answers at once if its key already changed above the index listed, so nothing between the listing and
 * the watch is missed.
 */
final class QueueWatch {
    private final RatchetClient client;
    private final LongSupplier nanoClock;
    private final SeenClusterTime seen;

    QueueWatch(RatchetClient client, LongSupplier nanoClock, SeenClusterTime seen) {
        this.client = client;
        this.nanoClock = nanoClock;
        this.seen = seen;
    }

    /**
     * Completes when any of {@code watched} changes in a way that may bring the turn nearer, or when
     * {@code millis} pass, or a watch fails (the listing that follows will tell). A change that leaves a
     * watched entry in place under the same place (a renewal) re-arms that watch alone when
     * {@code followRenewals}.
     */
    CompletableFuture<Void> woken(List<Item> watched, boolean followRenewals, long millis) {
        CompletableFuture<Void> woken = new CompletableFuture<>();
        List<CompletableFuture<WatchResult>> armed = new CopyOnWriteArrayList<>();
        // Once one watch wakes the waiter, the others are of no use: cancelled, they are not armed again.
        woken.whenComplete((ignored, error) -> armed.forEach(f -> f.cancel(false)));
        long ends = nanoClock.getAsLong() + TimeUnit.MILLISECONDS.toNanos(millis);
        for (Item entry : watched) {
            watch(entry.key(), entry.index(), entry.createdIndex(), followRenewals, ends, woken, armed);
        }
        return woken;
    }

    private void watch(String key, long after, long place, boolean followRenewals, long ends, CompletableFuture<Void> woken,
                       List<CompletableFuture<WatchResult>> armed) {
        long left = TimeUnit.NANOSECONDS.toMillis(ends - nanoClock.getAsLong());
        if (woken.isDone()) {
            return;
        }
        if (left <= 0) {
            woken.complete(null);
            return;
        }
        CompletableFuture<WatchResult> watch = client.watchAsync(key, after,
                Duration.ofMillis(Math.min(left, RatchetClient.MAX_WATCH.toMillis())));
        armed.add(watch);
        if (woken.isDone()) {
            watch.cancel(false);
        }
        watch.whenComplete((answer, error) -> {
            if (woken.isDone()) {
                return;
            }
            if (error != null) {
                if (Failures.unwrap(error) instanceof InvalidRequestException bad) {
                    woken.completeExceptionally(bad);
                } else {
                    woken.complete(null);
                }
                return;
            }
            Item now = answer.item().orElse(null);
            if (followRenewals && answer.changed() && now != null && now.createdIndex() == place && !seen.expired(now)) {
                watch(key, now.index(), place, true, ends, woken, armed);
                return;
            }
            woken.complete(null);
        });
    }
}
