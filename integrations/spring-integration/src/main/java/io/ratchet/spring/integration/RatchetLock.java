package io.ratchet.spring.integration;

import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.RatchetException;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.Locks;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * One lock of a {@link RatchetLockRegistry}: a {@link ReentrantLock} for the threads of this process, and a
 * Ratchet lease ({@link Locks}, the item {@code locks/<name>}) for the other processes. As with Spring's
 * {@code JdbcLockRegistry} and {@code RedisLockRegistry}:
 * <ul>
 *   <li>a thread first takes the local lock, then the lease; it is re-entrant per thread, and only the last
 *       {@link #unlock()} of a thread's holds releases the lease;</li>
 *   <li>a re-entrant {@code lock}/{@code tryLock} by the holding thread <em>renews</em> the lease (for the ttl
 *       it names), as {@code JdbcLockRegistry}'s acquire extends the row a client already holds. That is what
 *       keeps {@code LockRegistryLeaderInitiator}'s leader leading: it calls {@code tryLock} again on every
 *       heartbeat while it leads, and unlocks once;</li>
 *   <li>{@link #unlock()} from a thread that does not hold the lock throws {@link IllegalMonitorStateException};
 *       when the lease turns out to be lost (it ran out and was swept or taken over) it throws
 *       {@link ConcurrentModificationException}, as the JDBC and Redis registries do, and the thread no longer
 *       holds the lock either way;</li>
 *   <li>{@link #newCondition()} is not supported.</li>
 * </ul>
 *
 * <p>Waiting. {@link #lock()} waits (uninterruptibly, like {@link ReentrantLock#lock()}) for as long as it
 * takes, across errors that leave the cluster in a known state or that time heals (no leader, an
 * unanswered write), pausing {@link RatchetLockRegistry#setIdleBetweenTries idleBetweenTries} after each;
 * {@link #lockInterruptibly()} likewise, but gives up on an interrupt; {@link #tryLock()} makes one attempt;
 * {@link #tryLock(long, TimeUnit)} waits up to the given time. A waiter sleeps on a watch of the lock item
 * (the recipe's wait), in slices of half the ttl. Other failures are thrown as
 * {@link CannotAcquireLockException}, with the Ratchet error as the cause.
 *
 * <p>A lost lease. Every lease is only as good as its time: this process counts it from the moment the
 * acquire or renewal was sent, on its monotonic clock (the recipe returns a lease only if it was answered
 * within that time). A re-entrant {@code tryLock} that cannot renew the lease in that time, or finds it taken
 * over, answers {@code false} at once, with the hold count as it was before the call: the caller that
 * believed it held the lock learns of the loss (the leader initiator then revokes leadership). The next
 * acquire by that thread takes a new lease with a new fencing token; {@link #lock()} does so right away.
 * A renewal or grant answered after the caller stopped waiting is given back, never kept unknown.
 *
 * <p>The fencing token. {@link #fencingToken()} is the token of the lease the calling thread holds: pass
 * it with every write to the resource this lock protects, and have the resource refuse a token lower than
 * the highest it has seen. A holder that paused past its lease may not know yet that it lost the lock; the
 * token is what stops its late writes.
 */
public final class RatchetLock implements DistributedLock {
    /** No deadline: wait for as long as it takes. */
    private static final long FOREVER = Long.MAX_VALUE;
    /** A wait this long or longer has no deadline (the deadline arithmetic could overflow): about 146 years. */
    private static final Duration LONGEST_WAIT = Duration.ofNanos(Long.MAX_VALUE / 2);

    /** A lease and the moment, on this process's monotonic clock, until which it can be counted on. */
    private record Held(Lease lease, long validUntilNanos) {
        boolean validAt(long nanos) {
            return nanos - validUntilNanos < 0;
        }
    }

    private final RatchetLockRegistry registry;
    private final Locks locks;
    private final String name;
    private final ReentrantLock local = new ReentrantLock();
    /** The lease this process holds; changed only by the holding thread, or by a late answer that finds it unchanged. */
    private final AtomicReference<Held> held = new AtomicReference<>();
    private volatile long lastUsedNanos = System.nanoTime();

    RatchetLock(RatchetLockRegistry registry, Locks locks, String name) {
        this.registry = registry;
        this.locks = locks;
        this.name = name;
    }

    /** The Ratchet lock's name: the registry's prefix and the key's {@code toString()}; its item is {@code locks/<name>}. */
    public String name() {
        return name;
    }

    /**
     * The lease the calling thread holds, as last acquired or renewed; empty when this thread does not hold
     * the lock, or its lease was found lost.
     */
    public Optional<Lease> lease() {
        if (!local.isHeldByCurrentThread()) {
            return Optional.empty();
        }
        return Optional.ofNullable(held.get()).map(Held::lease);
    }

    /**
     * The fencing token of the lease the calling thread holds: the index of the write that granted it,
     * constant across renewals and greater for every later holder. Pass it to the resource this lock
     * protects, which must refuse a token lower than the highest it has seen.
     *
     * @throws IllegalMonitorStateException when the calling thread does not hold the lock
     * @throws IllegalStateException        when its lease was found lost
     */
    public long fencingToken() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("The current thread does not hold lock '" + name + "'");
        }
        Held h = held.get();
        if (h == null) {
            throw new IllegalStateException("The lease on lock '" + name + "' was lost: it has no fencing token");
        }
        return h.lease().fencingToken();
    }

    public boolean isHeldByCurrentThread() {
        return local.isHeldByCurrentThread();
    }

    /** How many holds the calling thread has; 0 when it does not hold the lock. */
    public int getHoldCount() {
        return local.getHoldCount();
    }

    /** Whether a thread of this process holds the lock (or is in the middle of acquiring its lease). */
    public boolean isAcquiredInThisProcess() {
        return local.isLocked();
    }

    /** Not held and nobody waiting for it locally: what {@link RatchetLockRegistry#expireUnusedOlderThan} may drop. */
    boolean isIdle() {
        return !local.isLocked() && !local.hasQueuedThreads();
    }

    long lastUsedNanos() {
        return lastUsedNanos;
    }

    // ---- acquire

    @Override
    public void lock() {
        lock(registry.getTtl());
    }

    @Override
    public void lock(Duration ttl) {
        Duration lease = registry.checkTtl(ttl);
        local.lock();
        boolean acquired = false;
        try {
            acquired = holdLease(lease, FOREVER, false, true);
        } catch (InterruptedException e) {
            // Not thrown when uninterruptible; keep the flag should it be.
            Thread.currentThread().interrupt();
        } finally {
            if (!acquired) {
                local.unlock();
            }
        }
        if (!acquired) {
            throw new CannotAcquireLockException("Failed to lock '" + name + "'");
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        Duration lease = registry.getTtl();
        local.lockInterruptibly();
        boolean acquired = false;
        try {
            acquired = holdLease(lease, FOREVER, true, true);
        } finally {
            if (!acquired) {
                local.unlock();
            }
        }
    }

    /** One attempt, with the registry's ttl; an interrupt is not waited on (the flag stays set). */
    @Override
    public boolean tryLock() {
        Duration lease = registry.getTtl();
        if (!local.tryLock()) {
            return false;
        }
        boolean acquired = false;
        try {
            acquired = holdLease(lease, System.nanoTime(), false, false);
            return acquired;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            if (!acquired) {
                local.unlock();
            }
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(Duration.ofNanos(unit.toNanos(time)), registry.getTtl());
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        Duration lease = registry.checkTtl(ttl);
        long wait = waitTime.isNegative() ? 0 : waitTime.compareTo(LONGEST_WAIT) >= 0 ? FOREVER : waitTime.toNanos();
        long deadline = wait == FOREVER ? FOREVER : System.nanoTime() + wait;
        if (!local.tryLock(wait, TimeUnit.NANOSECONDS)) {
            return false;
        }
        boolean acquired = false;
        try {
            acquired = holdLease(lease, deadline, true, false);
            return acquired;
        } finally {
            if (!acquired) {
                local.unlock();
            }
        }
    }

    /**
     * With the local lock just taken (once more): renews the lease on a re-entry, else acquires one by
     * {@code deadline}. A re-entry whose lease is lost answers false, unless {@code blocking} (a lock
     * call, which cannot answer false): then it acquires anew.
     */
    private boolean holdLease(Duration ttl, long deadline, boolean interruptible, boolean blocking)
            throws InterruptedException {
        try {
            if (local.getHoldCount() > 1 && held.get() != null) {
                if (renewHeld(ttl, interruptible)) {
                    return true;
                }
                if (!blocking) {
                    return false;
                }
            }
            Held stale = held.getAndSet(null);
            if (stale != null) {
                giveBack(stale.lease());
            }
            return acquireLease(ttl, deadline, interruptible);
        } catch (RatchetException e) {
            throw new CannotAcquireLockException("Failed to lock '" + name + "'", e);
        }
    }

    private boolean acquireLease(Duration ttl, long deadline, boolean interruptible) throws InterruptedException {
        RatchetException failure;
        while (true) {
            long sent = System.nanoTime();
            long left = deadline == FOREVER ? Long.MAX_VALUE : deadline - sent;
            long slice = Math.max(0, Math.min(left, Math.max(1, ttl.toNanos() / 2)));
            CompletableFuture<Optional<Lease>> attempt = slice == 0
                    ? locks.tryAcquireAsync(name, ttl) : locks.acquireAsync(name, ttl, Duration.ofNanos(slice));
            try {
                // The recipe bounds the wait (by the slice plus the watch slack), failover included.
                Optional<Lease> lease = await(attempt, FOREVER, interruptible, late -> late.ifPresent(this::giveBack));
                if (lease.isPresent()) {
                    // Counted from before the attempt that was granted was sent: never longer than the lease runs.
                    held.set(new Held(lease.get(), sent + lease.get().duration().toNanos()));
                    lastUsedNanos = System.nanoTime();
                    return true;
                }
                failure = null;
            } catch (ClusterUnavailableException | UnknownOutcomeException e) {
                // Nothing held that we know of (an unanswered grant runs out on its own); time heals these.
                failure = e;
                pause(deadline, interruptible);
            } catch (TimeoutException e) {
                throw new IllegalStateException("not reached: no deadline", e);
            }
            if (deadline != FOREVER && System.nanoTime() - deadline >= 0) {
                if (failure != null) {
                    throw failure;
                }
                return false;
            }
        }
    }

    /**
     * Renews the held lease to {@code ttl}, waiting no longer than the lease can be counted on. False when it
     * is lost: taken over or swept, refused, or not renewed in its time (then it is given back).
     */
    private boolean renewHeld(Duration ttl, boolean interruptible) throws InterruptedException {
        while (true) {
            Held h = held.get();
            if (h == null) {
                return false;
            }
            long sent = System.nanoTime();
            if (!h.validAt(sent)) {
                if (lose(h)) {
                    return false;
                }
                continue; // a renewal abandoned earlier was answered meanwhile: renew that one
            }
            CompletableFuture<Lease> renewal = locks.renewAsync(h.lease(), ttl);
            try {
                Lease renewed = await(renewal, h.validUntilNanos(), interruptible, late -> adoptLate(h, late, sent));
                if (!held.compareAndSet(h, new Held(renewed, sent + renewed.duration().toNanos()))) {
                    giveBack(renewed);
                    return false;
                }
                lastUsedNanos = System.nanoTime();
                return true;
            } catch (TimeoutException e) {
                if (lose(h)) {
                    return false;
                }
            } catch (LeaseLostException e) {
                if (held.compareAndSet(h, null)) {
                    return false;
                }
                // Refused because a renewal abandoned earlier moved the lease on meanwhile: renew that one.
            } catch (ClusterUnavailableException | UnknownOutcomeException e) {
                // Try again at the same index while the lease lasts: if the unanswered renewal was applied after
                // all, the next one is refused and the lease counts as lost (it runs out on its own).
                pause(h.validUntilNanos(), interruptible);
            }
        }
    }

    /** Renews the lease the calling thread holds, for {@link RatchetLockRegistry#renewLock}. */
    void renew(Duration ttl) {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("The current thread does not hold lock '" + name + "'");
        }
        boolean renewed;
        try {
            renewed = renewHeld(ttl, false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            renewed = false;
        } catch (RatchetException e) {
            throw new DataAccessResourceFailureException("Failed to renew lock '" + name + "'", e);
        }
        if (!renewed) {
            throw new IllegalStateException("Could not renew lock '" + name + "': its lease was lost (it ran out, or"
                    + " another owner took the lock over); the next acquire takes a new one");
        }
    }

    // ---- release

    /**
     * Undoes one hold of the calling thread; the last releases the lease.
     *
     * @throws IllegalMonitorStateException        when the calling thread does not hold the lock
     * @throws ConcurrentModificationException     when the lease was lost before the release (it ran out and
     *                                             was swept, or another owner holds the lock): what it protected
     *                                             may have been changed by another holder meanwhile
     * @throws DataAccessResourceFailureException  when the release got no answer (the lease then runs out)
     */
    @Override
    public void unlock() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("The current thread does not hold lock '" + name + "'");
        }
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        Held h = held.getAndSet(null);
        try {
            if (h == null) {
                throw lost(null);
            }
            await(locks.releaseAsync(h.lease()), FOREVER, false, ignored -> { });
        } catch (LeaseLostException e) {
            throw lost(e);
        } catch (RatchetException e) {
            throw new DataAccessResourceFailureException("Failed to release lock '" + name + "'; its lease runs out"
                    + " on its own", e);
        } catch (InterruptedException | TimeoutException e) {
            throw new IllegalStateException("not reached: uninterruptible, no deadline", e);
        } finally {
            lastUsedNanos = System.nanoTime();
            local.unlock();
        }
    }

    private ConcurrentModificationException lost(LeaseLostException cause) {
        return new ConcurrentModificationException("The lease on lock '" + name + "' was lost before it was released"
                + " (it ran out and was swept, or another owner took the lock over). The integrity of data protected"
                + " by this lock may have been compromised.", cause);
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Conditions are not supported");
    }

    // ---- lost and late answers

    /**
     * The lease can no longer be counted on: forget it and give it back (a no-op if it is gone already).
     * False when it had been replaced meanwhile (a late renewal was adopted): then nothing is lost.
     */
    private boolean lose(Held h) {
        if (held.compareAndSet(h, null)) {
            giveBack(h.lease());
            return true;
        }
        return held.get() == null;
    }

    /** A renewal answered after the caller stopped waiting: kept if nothing changed meanwhile, else given back. */
    private void adoptLate(Held h, Lease late, long sent) {
        if (!held.compareAndSet(h, new Held(late, sent + late.duration().toNanos()))) {
            giveBack(late);
        }
    }

    /** Releases a lease nobody holds, in the background: failures are moot, it runs out on its own. */
    private void giveBack(Lease lease) {
        locks.releaseAsync(lease).exceptionally(e -> null);
    }

    // ---- waiting

    /**
     * The future's value, waited for until {@code deadline} (nanos; {@link #FOREVER}: no bound). An interrupt
     * ends the wait only when {@code interruptible} (otherwise it is kept for the caller). When the wait ends
     * early, {@code late} gets the value should it arrive after all. A Ratchet error is rethrown as is.
     */
    private static <T> T await(CompletableFuture<T> future, long deadline, boolean interruptible, Consumer<? super T> late)
            throws InterruptedException, TimeoutException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (deadline == FOREVER) {
                        return future.get();
                    }
                    return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    if (interruptible) {
                        future.thenAccept(late);
                        throw e;
                    }
                    interrupted = true;
                } catch (TimeoutException e) {
                    future.thenAccept(late);
                    throw e;
                } catch (ExecutionException | CancellationException e) {
                    throw rethrown(e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static RuntimeException rethrown(Throwable t) {
        Throwable cause = t;
        while ((cause instanceof ExecutionException || cause instanceof CompletionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof RuntimeException r) {
            return r;
        }
        if (cause instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(cause);
    }

    /** Waits {@code idleBetweenTries}, never past {@code deadline}; an interrupt is kept unless {@code interruptible}. */
    private void pause(long deadline, boolean interruptible) throws InterruptedException {
        long ends = System.nanoTime() + registry.getIdleBetweenTries().toNanos();
        if (deadline != FOREVER && deadline - ends < 0) {
            ends = deadline;
        }
        boolean interrupted = false;
        try {
            for (long left = ends - System.nanoTime(); left > 0; left = ends - System.nanoTime()) {
                try {
                    TimeUnit.NANOSECONDS.sleep(left);
                } catch (InterruptedException e) {
                    if (interruptible) {
                        throw e;
                    }
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        Held h = held.get();
        return "RatchetLock[" + name + (h == null ? ", no lease" : ", token " + h.lease().fencingToken()) + "]";
    }
}
