package io.ratchet.recipes.lock;

import io.ratchet.client.RatchetClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One named lock of any kind ({@link Locks#lock}, {@link FairLocks#lock}, {@link Semaphores#lock}, one
 * permit each): acquire a {@link Grant}, renew it, release it. The kinds differ in who gets the lock
 * next (anyone, or first come first served) and how many hold it at once; the contract is the same.
 *
 * <p>Guarantee: at any cluster time no more holders hold it than it has permits (one, for a lock); every
 * grant carries a fencing token, and a lock's tokens strictly increase from holder to holder. Expiry is
 * judged on cluster time; this process's clock can only shorten a grant, never lengthen it.
 *
 * <p>What the caller owes: balance every acquire that returned a grant with a {@link #releaseAsync}, or
 * let its lease run out; renew well within {@link Grant#duration()}; pass the fencing token to what the
 * lock protects. Errors are those of the kind's class: {@link LeaseLostException} when a renew or release
 * finds the grant gone, {@code InvalidRequestException} for a bad lease or wait (nothing written),
 * {@code UnknownOutcomeException} when a write got no answer.
 *
 * @param <G> the kind's grant
 */
public interface Lock<G extends Grant> {
    /** The lock's name. */
    String name();

    /** The owner id written into every grant this lock acquires. */
    String owner();

    /** One look, no waiting: a grant of {@code lease} when the lock can be had now, else empty. */
    CompletableFuture<Optional<G>> tryAcquireAsync(Duration lease);

    /** Waits up to {@code waitTimeout} (plus {@link RatchetClient#WATCH_SLACK} at most) for a grant of {@code lease}. */
    CompletableFuture<Optional<G>> acquireAsync(Duration lease, Duration waitTimeout);

    /** Extends the grant by its own duration; fails with {@link LeaseLostException} when it is gone. */
    CompletableFuture<G> renewAsync(G grant);

    /** Frees what the grant holds at once; fails with {@link LeaseLostException} when it was already gone. */
    CompletableFuture<Void> releaseAsync(G grant);

    /**
     * As {@link #releaseAsync(Grant)}, for a holder that kept only its grant's {@link Grant#currentIndex()}
     * (a command line, or a process that learned of its grant from {@link #holders()} after an acquire got
     * no answer). The index is the atomic check: a holder who renewed or took over since is never touched.
     * Fails with {@link LeaseLostException} when nothing of this lock is at {@code index}.
     */
    CompletableFuture<Void> releaseAsync(long index);

    /** Who holds the lock now (a linearizable read): none, one, or for a semaphore up to its permits. */
    CompletableFuture<List<LockHolder>> holdersAsync();

    default Optional<G> tryAcquire(Duration lease) {
        return RatchetClient.await(tryAcquireAsync(lease));
    }

    default Optional<G> acquire(Duration lease, Duration waitTimeout) {
        return RatchetClient.await(acquireAsync(lease, waitTimeout));
    }

    default G renew(G grant) {
        return RatchetClient.await(renewAsync(grant));
    }

    default void release(G grant) {
        RatchetClient.await(releaseAsync(grant));
    }

    default void release(long index) {
        RatchetClient.await(releaseAsync(index));
    }

    default List<LockHolder> holders() {
        return RatchetClient.await(holdersAsync());
    }
}
