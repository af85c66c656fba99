package io.ratchet.recipes.lock;

import io.ratchet.client.RatchetClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What {@link FairLocks} and {@link Semaphores} share, whatever the number of permits: both are a
 * {@link LeaseQueue} of leased entries, renewed and released by an entry's current index, and listed in
 * the order they are served.
 */
abstract class QueueLocks extends LockKind<QueueLease> {
    final LeaseQueue queue;

    QueueLocks(LeaseQueue queue) {
        super(queue.options());
        this.queue = queue;
    }

    /**
     * Extends the lease to {@code duration} after the renewal's cluster time. Succeeds only while the entry
     * still has {@link QueueLease#currentIndex()} and has not run out; the returned lease has a new current
     * index and expiry, and the same place and token.
     *
     * @throws LeaseLostException (through the future) when the lease ran out, was released, or its renewal
     *                            was answered later than {@code duration} after it was sent (then given back)
     */
    @Override
    public CompletableFuture<QueueLease> renewAsync(QueueLease lease, Duration duration) {
        return LockEvents.renew(queue.client(), queue.eventKind(), lease == null ? "" : lease.name(),
                lease == null ? 0 : lease.fencingToken(), System.nanoTime(), queue.leases().renew(lease, duration));
    }

    /**
     * Renews the entry that {@code name}'s queue has at {@code index}, for a holder that kept only the
     * index (a command line): lists the queue for its entry, then renews at that index, which is the atomic
     * check.
     *
     * @throws LeaseLostException (through the future) when no entry is at {@code index}, or it ran out
     */
    @Override
    public CompletableFuture<QueueLease> renewAsync(String name, long index, Duration duration) {
        return queue.leases().renewAt(name, index, duration);
    }

    /**
     * Gives the turn back: deletes the entry at {@link QueueLease#currentIndex()}; the next waiter's watch
     * fires. A release after the lease ran out but before the sweeper removed it still succeeds.
     *
     * @throws LeaseLostException (through the future) when the entry was swept, released or moved on
     */
    @Override
    public CompletableFuture<Void> releaseAsync(QueueLease lease) {
        return LockEvents.release(queue.client(), queue.eventKind(), lease == null ? "" : lease.name(),
                lease == null ? 0 : lease.fencingToken(), queue.leases().release(lease));
    }

    @Override
    public CompletableFuture<Void> releaseAsync(String name, long index) {
        return LockEvents.release(queue.client(), queue.eventKind(), name, 0, queue.leases().releaseAt(name, index));
    }

    /**
     * {@code name}'s queue as it stands: the holders first (a token of 0 for the moment between a turn and
     * its turn write), then the waiters in the order they will be served.
     */
    public CompletableFuture<List<QueueEntry>> queueAsync(String name) {
        return queue.liveEntries(name).thenApply(entries -> entries.stream().map(e -> QueueListing.entryOf(name, e)).toList());
    }

    public List<QueueEntry> queue(String name) {
        return RatchetClient.await(queueAsync(name));
    }
}
