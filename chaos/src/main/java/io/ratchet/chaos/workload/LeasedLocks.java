package io.ratchet.chaos.workload;

import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import java.time.Duration;
import java.util.Optional;

/**
 * The locks workload over Ratchet's own lock API, {@link Locks}: leased grants judged on cluster time,
 * with the acquiring index as fencing token. A holder never renews, so its lease's current index is its
 * token, and a grant that outlives its lease (a paused holder) is what the checker's lease windows and
 * the fenced resource are there to judge.
 */
public final class LeasedLocks implements LockService {
    /** Far longer than a hold (milliseconds), short enough that an abandoned grant frees itself in a run. */
    static final Duration LEASE = Duration.ofSeconds(5);

    private final RatchetClient client;

    public LeasedLocks(RatchetClient client) {
        this.client = client;
    }

    @Override
    public String key(String name) {
        return Locks.key(name);
    }

    @Override
    public Acquisition tryAcquire(String name, String owner) {
        Optional<Lease> lease = new Locks(client, LockOptions.defaults().withOwner(owner)).tryAcquire(name, LEASE);
        // A refusal does not say who holds it without another read; the lease frees an abandoned grant.
        return lease.map(l -> new Acquisition(true, new LockGrant(name, owner, l.fencingToken())))
                .orElseGet(() -> new Acquisition(false, null));
    }

    @Override
    public Optional<LockGrant> holder(String name) {
        return new Locks(client).holder(name).map(h -> new LockGrant(name, h.owner(), h.fencingToken()));
    }

    @Override
    public boolean release(LockGrant grant) {
        try {
            new Locks(client).release(grant.name(), grant.token());
            return true;
        } catch (LeaseLostException e) {
            return false;
        }
    }

    @Override
    public long leaseMillis() {
        return LEASE.toMillis();
    }
}
