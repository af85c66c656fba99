package io.ratchet.recipes.lock;

import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Limits;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * Leased counting semaphores: up to N holders at once, served first come, first served, as Curator's
 * {@code InterProcessSemaphoreV2}; built like {@link FairLocks}, on {@link RatchetClient}'s public
 * primitives only.
 *
 * <p>Semaphore {@code NAME} is a queue of items {@code semaphores/NAME/<16 hex digits>}, each
 * {@code {"owner": ...}} with a lease, and the item {@code semaphores/NAME/permits},
 * {@code {"permits": N}}, which the first acquirer creates (create-only) and every later one checks: all
 * holders of a semaphore agree on N, and an acquire that asks for another number is refused with
 * {@link InvalidRequestException} (having left the queue). The item stays when the semaphore is idle; to
 * change N, delete it while nobody holds or waits.
 * <ul>
 *   <li>an acquirer joins with a create-only put with a time-to-live; the index that created its entry is
 *       its place (ties, from one log entry, ordered by key). It has its turn while fewer than N live entries
 *       (not expired at cluster time) are ahead of it; then it renews its entry (its turn write), whose
 *       index is its {@link QueueLease#fencingToken() fencing token};</li>
 *   <li>the first waiter (exactly N live entries ahead, all holders) watches those N; every later waiter
 *       watches only its predecessor. A release wakes the first waiter alone; its turn write wakes the next
 *       waiter, who then watches the holders;</li>
 *   <li>waiters renew their entries every third of the lease, so a waiter or holder that dies leaves the
 *       queue when its lease runs out; renew and release go by the entry's current index.</li>
 * </ul>
 *
 * <p><b>Guarantee.</b> At any cluster time at most N owners hold a permit of a semaphore (whose permits
 * item was not changed meanwhile), and permits go to live entries in the order of their places. Leases,
 * late answers and {@link LeaseLostException} follow the rules of {@link FairLocks} and {@link Locks}: expiry
 * on cluster time, this process's clock only ever shortening a lease. Tokens do not decrease in the order
 * turns are decided (turns decided in one log entry share one); with several holders at once a resource
 * cannot refuse "lower" tokens, so use a {@link FairLocks fair lock} where a resource must be fenced.
 *
 * <p><b>Errors:</b> {@link InvalidRequestException} for a bad name, permits, lease or wait, and for a
 * number of permits other than the semaphore's; the rest as {@link FairLocks}
 * ({@link UnknownOutcomeException}, {@link ClusterUnavailableException}, {@link LeaseLostException}).
 */
public final class Semaphores extends QueueLocks {
    /** Semaphore queues live under this prefix: {@code semaphores/<name>/<entry>} and {@code semaphores/<name>/permits}. */
    public static final String PREFIX = "semaphores/";
    /** The most permits a semaphore may have (the first waiter watches every holder). */
    public static final int MAX_PERMITS = 1024;

    /** Semaphores with {@link LockOptions#defaults()}: a fresh owner id and a one-hour maximum lease. */
    public Semaphores(RatchetClient client) {
        this(client, LockOptions.defaults());
    }

    public Semaphores(RatchetClient client, LockOptions options) {
        this(client, options, System::nanoTime, Limits.MAX_PAGE_SIZE);
    }

    /** With {@code nanoClock} for {@link System#nanoTime()} and a smaller listing page, for tests. */
    Semaphores(RatchetClient client, LockOptions options, LongSupplier nanoClock, int pageSize) {
        super(new LeaseQueue(client, options, nanoClock, PREFIX, "semaphore", true, pageSize));
    }

    /**
     * One permit of semaphore {@code name} (which has {@code permits}) as a {@link Lock}: up to
     * {@code permits} of them are held at once.
     */
    public Lock<QueueLease> lock(String name, int permits) {
        queue.queuePrefix(name);
        requirePermits(permits);
        return new NamedLock<>(name, this, lease -> tryAcquireAsync(name, permits, lease),
                (lease, wait) -> acquireAsync(name, permits, lease, wait), () -> holdersAsync(name));
    }

    /** The item that holds semaphore {@code name}'s number of permits, {@code semaphores/<name>/permits}. */
    public String permitsKey(String name) {
        return QueueListing.permitsKey(queue.queuePrefix(name));
    }

    /**
     * Takes a permit of semaphore {@code name} (which has {@code permits}) for {@code lease} if one is free
     * and nobody waits before it; else leaves the queue and completes with empty.
     *
     * @throws InvalidRequestException (through the future) when the semaphore has another number of permits
     */
    public CompletableFuture<Optional<QueueLease>> tryAcquireAsync(String name, int permits, Duration lease) {
        return LeaseQueue.checked(() -> queue.tryAcquire(name, lease, requirePermits(permits)));
    }

    /**
     * Joins the queue and waits up to {@code waitTimeout} for a permit; completes with empty (having left the
     * queue) if none came by then. Bounds and late answers as {@link FairLocks#acquireAsync}.
     *
     * @throws InvalidRequestException (through the future) when the semaphore has another number of permits
     */
    public CompletableFuture<Optional<QueueLease>> acquireAsync(String name, int permits, Duration lease,
                                                               Duration waitTimeout) {
        return LeaseQueue.checked(() -> queue.acquire(name, lease, waitTimeout, requirePermits(permits)));
    }

    /** The semaphore's number of permits, as its permits item says; empty when nobody has used it yet. */
    public CompletableFuture<Optional<Integer>> permitsAsync(String name) {
        return queue.permits(name);
    }

    /**
     * Who holds semaphore {@code name}'s permits now: the first N live entries of its queue (N from its
     * permits item; none without one). An observation, as {@link FairLocks#holderAsync}.
     */
    public CompletableFuture<List<LockHolder>> holdersAsync(String name) {
        return permitsAsync(name).thenCombine(queueAsync(name), (permits, entries) -> entries
                .subList(0, Math.min(entries.size(), permits.orElse(0))).stream().map(QueueEntry::holder).toList());
    }

    // ---- blocking twins

    public Optional<QueueLease> tryAcquire(String name, int permits, Duration lease) {
        return RatchetClient.await(tryAcquireAsync(name, permits, lease));
    }

    public Optional<QueueLease> acquire(String name, int permits, Duration lease, Duration waitTimeout) {
        return RatchetClient.await(acquireAsync(name, permits, lease, waitTimeout));
    }

    public Optional<Integer> permits(String name) {
        return RatchetClient.await(permitsAsync(name));
    }

    public List<LockHolder> holders(String name) {
        return RatchetClient.await(holdersAsync(name));
    }

    private static int requirePermits(int permits) {
        if (permits < 1 || permits > MAX_PERMITS) {
            throw LeaseQueue.invalid("a semaphore has 1.." + MAX_PERMITS + " permits, not " + permits);
        }
        return permits;
    }
}
