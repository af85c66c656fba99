package io.ratchet.recipes.lock;

import io.ratchet.client.RatchetClient;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * What every kind of lock ({@link Locks}, {@link FairLocks}, {@link Semaphores}) offers a holder once it
 * has a grant: renew it, release it, given the grant or (for a holder that kept only the index: a command
 * line, a process that restarted) the lock's name and the grant's current index; and the blocking twin of
 * each. A kind says how one renewal and one release are made; the rules they follow are
 * {@link LeaseKeeper}'s. Only this package's kinds extend it (its constructor is not public).
 *
 * @param <G> the kind's grant
 */
public abstract class LockKind<G extends Grant> {
    private final LockOptions options;

    LockKind(LockOptions options) {
        this.options = options;
    }

    /** The owner id written into every grant this instance makes. */
    public String owner() {
        return options.owner();
    }

    public LockOptions options() {
        return options;
    }

    /** Extends the grant by its own {@link Grant#duration()}, from the renewal's cluster time. */
    public CompletableFuture<G> renewAsync(G lease) {
        return LeaseKeeper.checked(() -> {
            if (lease == null) {
                throw LeaseKeeper.invalid("no lease given");
            }
            return renewAsync(lease, lease.duration());
        });
    }

    /**
     * Extends the grant to {@code duration} after the renewal's cluster time. Succeeds only while its item
     * still has {@link Grant#currentIndex()} and the lease has not run out; the returned grant has a new
     * current index and expiry, and the same fencing token.
     *
     * @throws LeaseLostException (through the future) when the lease ran out, was released or taken over, or
     *                            its renewal was answered later than {@code duration} after it was sent
     */
    public abstract CompletableFuture<G> renewAsync(G lease, Duration duration);

    /**
     * Renews the grant that lock {@code name} has at {@code index}, for a holder that kept only the index:
     * reads the lock for its owner and token, then renews at that index, which is the atomic check.
     *
     * @throws LeaseLostException (through the future) when nothing is at {@code index}, or its lease ran out
     */
    public abstract CompletableFuture<G> renewAsync(String name, long index, Duration duration);

    /**
     * Frees what the grant holds: a delete at {@link Grant#currentIndex()}. A release after the lease ran
     * out but before the sweeper removed it still succeeds (nobody else was let in meanwhile).
     *
     * @throws LeaseLostException (through the future) when it was swept, released or taken over
     */
    public abstract CompletableFuture<Void> releaseAsync(G lease);

    /** As {@link #releaseAsync(Grant)}, for a holder that kept only the lock's name and the grant's index. */
    public abstract CompletableFuture<Void> releaseAsync(String name, long index);

    // ---- blocking twins

    public G renew(G lease) {
        return RatchetClient.await(renewAsync(lease));
    }

    public G renew(G lease, Duration duration) {
        return RatchetClient.await(renewAsync(lease, duration));
    }

    public G renew(String name, long index, Duration duration) {
        return RatchetClient.await(renewAsync(name, index, duration));
    }

    public void release(G lease) {
        RatchetClient.await(releaseAsync(lease));
    }

    public void release(String name, long index) {
        RatchetClient.await(releaseAsync(name, index));
    }
}
