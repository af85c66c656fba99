package io.ratchet.shedlock;

import io.ratchet.client.RatchetException;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.Locks;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock {@link RatchetLockProvider} granted: a ShedLock {@link SimpleLock} that shows its Ratchet
 * {@link Lease} and fencing token.
 *
 * <p>Guarantee: until cluster time reaches {@link Lease#expiresAt()} of {@link #lease()}, no other lock call
 * of this name succeeds. What the caller owes: pass {@link #fencingToken()} to every resource the lock
 * protects, which must refuse a token lower than the highest it has seen.
 *
 * <p>{@link SimpleLock}'s contract holds: once unlocked or extended (whatever the extension's outcome), this
 * instance is spent and every further call throws {@link IllegalStateException}; an extension that got no
 * answer (the client's exception) leaves it usable. Thread-safe. See {@link RatchetLockProvider} for what
 * unlock and extend do on the cluster.
 */
public final class RatchetSimpleLock implements SimpleLock {
    private static final Logger log = LoggerFactory.getLogger(RatchetSimpleLock.class);

    private final Locks locks;
    private final LockConfiguration configuration;
    private final Lease lease;
    /** When {@code lockAtLeastFor} began, on this process's monotonic clock: the call to lock or extend. */
    private final long startedNanos;
    private final LeaseChain chain;
    /** Guarded by {@code this}. */
    private boolean spent;

    private RatchetSimpleLock(Locks locks, LockConfiguration configuration, Lease lease, long startedNanos, LeaseChain chain) {
        this.locks = locks;
        this.configuration = configuration;
        this.lease = lease;
        this.startedNanos = startedNanos;
        this.chain = chain;
    }

    /** The first lock of a chain, current on the calling thread. */
    static RatchetSimpleLock start(Locks locks, LockConfiguration configuration, Lease lease, long startedNanos) {
        return new RatchetSimpleLock(locks, configuration, lease, startedNanos, LeaseChain.start(lease));
    }

    /** The lease this lock holds: name, owner, fencing token, current index and expiry (cluster time). */
    public Lease lease() {
        return lease;
    }

    /** The fencing token: the same across extensions, greater for every later holder. */
    public long fencingToken() {
        return lease.fencingToken();
    }

    /** ShedLock's configuration of this lock (of the extension, for an extended lock). */
    public LockConfiguration configuration() {
        return configuration;
    }

    /**
     * Releases the lock, or keeps it until {@code lockAtLeastFor} has passed (a renewal for what is left).
     * A lease already lost, or a call that got no answer, is logged, not thrown: the lease then runs out by itself.
     *
     * @throws IllegalStateException when this lock was already unlocked or extended
     */
    @Override
    public void unlock() {
        synchronized (this) {
            if (!spent) {
                spent = true;
            } else {
                if (chain.lost()) {
                    // ShedLock unlocks the lock whose extension came back empty; only now has its task ended.
                    chain.end();
                }
                throw spent();
            }
        }
        try {
            free();
        } finally {
            chain.end();
        }
    }

    /**
     * Renews the lease for {@code lockAtMostFor} from now; the new lock's {@code lockAtLeastFor} counts from
     * this call. Empty when the lease ran out or was taken over (then this thread's current lease is gone too).
     *
     * @throws IllegalStateException when this lock was already unlocked or extended
     * @throws RatchetException      (the client's) when the renewal got no answer: this lock stays usable
     */
    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        synchronized (this) {
            if (spent) {
                throw spent();
            }
            LockConfiguration next = new LockConfiguration(ClockProvider.now(), configuration.getName(), lockAtMostFor,
                    lockAtLeastFor);
            long started = System.nanoTime();
            Lease renewed;
            try {
                renewed = locks.renew(lease, lockAtMostFor);
            } catch (LeaseLostException e) {
                spent = true;
                chain.markLost();
                log.warn("Lock '{}' could not be extended: {}", lease.name(), e.getMessage());
                return Optional.empty();
            }
            spent = true;
            chain.extendedTo(renewed);
            return Optional.of(new RatchetSimpleLock(locks, next, renewed, started, chain));
        }
    }

    private void free() {
        Duration keep = leftOfLockAtLeastFor();
        try {
            if (keep.isZero()) {
                locks.release(lease);
            } else {
                locks.renew(lease, keep);
            }
        } catch (LeaseLostException e) {
            log.warn("Lock '{}' was already lost when unlocked: {}", lease.name(), e.getMessage());
        } catch (RatchetException e) {
            log.warn("Lock '{}' could not be unlocked ({}): it is held until its lease runs out, at {} (cluster time) at"
                    + " the latest", lease.name(), e.getMessage(), lease.expiresAt());
        }
    }

    /** What is left of {@code lockAtLeastFor}, in whole milliseconds rounded up (the cluster's grain); zero once passed. */
    private Duration leftOfLockAtLeastFor() {
        long leftNanos = configuration.getLockAtLeastFor().toNanos() - (System.nanoTime() - startedNanos);
        if (leftNanos <= 0) {
            return Duration.ZERO;
        }
        // Never above lockAtMostFor in whole milliseconds, which the lease check already accepted.
        long millis = Math.min(TimeUnit.NANOSECONDS.toMillis(leftNanos + 999_999), configuration.getLockAtMostFor().toMillis());
        return millis <= 0 ? Duration.ZERO : Duration.ofMillis(millis);
    }

    private IllegalStateException spent() {
        return new IllegalStateException("Lock " + configuration.getName() + " is not valid, it has already been unlocked"
                + " or extended");
    }

    @Override
    public String toString() {
        return "RatchetSimpleLock{" + lease + "}";
    }
}
