package io.ratchet.shedlock;

import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Expiry;
import io.ratchet.protocol.Keys;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.LockHolder;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock {@link ExtensibleLockProvider} over Ratchet's leased locks ({@link Locks}), which it only
 * translates: the ShedLock lock {@code n} is the Ratchet lock {@code <prefix>n} (the item
 * {@code locks/<prefix>n}; names compare case-insensitively, as keys do), and {@code lockAtMostFor} is its
 * lease, judged on cluster time.
 * <ul>
 *   <li>{@link #lock}: one {@link Locks#tryAcquire} for {@code lockAtMostFor}; empty while anyone holds the
 *       lock, this provider included (not re-entrant). The lock returned is a {@link RatchetSimpleLock}.</li>
 *   <li>{@link SimpleLock#unlock()}: a {@link Locks#release}, or, while {@code lockAtLeastFor} (counted on
 *       this process's monotonic clock from the call to {@code lock}) has not passed, a {@link Locks#renew}
 *       for what is left of it, so that the lease ends about {@code lockAtLeastFor} after the lock began.</li>
 *   <li>{@link SimpleLock#extend}: a {@link Locks#renew} for the new {@code lockAtMostFor}; the new
 *       {@code lockAtLeastFor} counts from the call to {@code extend}. So
 *       {@code new KeepAliveLockProvider(provider, scheduler)} works.</li>
 * </ul>
 *
 * <p>Guarantee: until the lease of a lock this provider returned runs out at cluster time
 * ({@link Lease#expiresAt()}), no other {@code lock} of its name succeeds, and every grant's fencing token is
 * greater than every earlier grant's.
 *
 * <p>What the caller owes: pass the fencing token to every resource the task changes, which must refuse a
 * token lower than the highest it has seen (a task that overruns {@code lockAtMostFor}, or pauses, keeps
 * running while another process may already hold the lock); a task under {@code @SchedulerLock} never sees
 * its {@link SimpleLock}, so it reads {@link #currentFencingToken()}. Count on {@code lockAtMostFor} from the
 * moment {@code lock} or {@code extend} was called, not from when it returned (as with {@link Locks}). Keep
 * {@code lockAtMostFor} within the maximum lease of the {@link Locks} given (the
 * {@link #RatchetLockProvider(RatchetClient) client constructor} allows {@link #MAX_LEASE}). Share one
 * instance per process: it tells its own grants from others' by its owner id.
 *
 * <p>In doubt: when an acquire gets no answer ({@link UnknownOutcomeException}) it may still have taken the
 * lock, so {@code lock} reads {@link Locks#holder}. If the holder is this provider's owner with a grant this
 * instance has never handed out, that grant can only be an unanswered acquire of this instance (this one, or
 * an earlier one that returned empty; owner ids are unique per instance, as {@link LockOptions} asks): it is
 * renewed at its index for {@code lockAtMostFor} and returned. In
 * every other case {@code lock} returns empty (ShedLock skips the run), and a grant the acquire may have made
 * runs out after {@code lockAtMostFor}. Adopting rather than releasing saves the run; renewing first gives
 * the task its full lease, however old the grant.
 *
 * <p>Errors: {@code lock} returns empty, with a warning logged, when the cluster is unavailable
 * ({@link ClusterUnavailableException}) or the acquire stays in doubt; it throws
 * {@link InvalidRequestException} for a name that makes no valid key, or a {@code lockAtMostFor} below a
 * millisecond or above the maximum lease (retrying cannot help; ShedLock passes it to the caller).
 * {@code unlock} throws nothing but ShedLock's {@link IllegalStateException}: a lease already lost, or a
 * release or renewal that got no answer, is logged, and the lease runs out by itself. {@code extend} returns
 * empty when the lease is lost ({@link LeaseLostException}), and throws the client's exception when the
 * renewal got no answer (the old lock then stays usable, so it can still be unlocked).
 */
public final class RatchetLockProvider implements ExtensibleLockProvider {
    /** The longest lease the client constructor allows: the longest time-to-live the cluster accepts. */
    public static final Duration MAX_LEASE = Duration.ofMillis(Expiry.MAX_TTL_MILLIS);

    private static final Logger log = LoggerFactory.getLogger(RatchetLockProvider.class);

    private final Locks locks;
    private final String namePrefix;
    /**
     * Shared by every acquire until its grant is recorded in {@link #handedOut}, exclusive for an in-doubt
     * claim: so a claim never sees a grant that another thread's acquire has made but not recorded yet.
     */
    private final ReadWriteLock handing = new ReentrantReadWriteLock();
    /** Per lock (normalized name), the highest fencing token this instance has handed out. */
    private final ConcurrentMap<String, Long> handedOut = new ConcurrentHashMap<>();

    /**
     * Locks under a fresh owner id ({@link LockOptions#newOwnerId()}: host, process, random) with
     * {@link #MAX_LEASE} as the maximum lease, so any {@code lockAtMostFor} the cluster can keep is accepted.
     */
    public RatchetLockProvider(RatchetClient client) {
        this(new Locks(client, new LockOptions(LockOptions.newOwnerId(), MAX_LEASE)));
    }

    /** Locks through {@code locks}: its {@link LockOptions} choose the owner id and the maximum lease. */
    public RatchetLockProvider(Locks locks) {
        this(locks, "");
    }

    /**
     * As {@link #RatchetLockProvider(Locks)}, with every lock name prefixed by {@code namePrefix} (e.g.
     * {@code "shedlock/"}), to keep ShedLock's locks apart from others.
     *
     * @throws InvalidRequestException when the prefix alone already makes no valid key
     */
    public RatchetLockProvider(Locks locks, String namePrefix) {
        this.locks = Objects.requireNonNull(locks, "locks");
        this.namePrefix = Objects.requireNonNull(namePrefix, "namePrefix");
        if (!namePrefix.isEmpty()) {
            Locks.key(namePrefix); // fails now rather than at the first scheduled run
        }
    }

    /** The locks this provider takes: for {@link Locks#holder} and the owner id. */
    public Locks locks() {
        return locks;
    }

    /** The Ratchet lock name of ShedLock's lock {@code shedLockName}: the prefix, then the name. */
    public String lockName(String shedLockName) {
        return namePrefix + shedLockName;
    }

    /**
     * Takes lock {@code configuration.getName()} for {@code lockAtMostFor} if nobody holds it (see the class
     * comment); the lock returned is a {@link RatchetSimpleLock}, and becomes this thread's
     * {@link #currentLease()} until it is unlocked.
     *
     * @throws InvalidRequestException for a name that makes no valid key, or a {@code lockAtMostFor} below
     *                                 a millisecond or above the maximum lease
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        long started = System.nanoTime();
        String name = lockName(configuration.getName());
        Duration lease = configuration.getLockAtMostFor();
        Optional<Lease> granted;
        try {
            granted = acquire(name, lease);
        } catch (UnknownOutcomeException e) {
            granted = resolveInDoubt(name, lease, e);
        } catch (ClusterUnavailableException e) {
            log.warn("Lock '{}' not taken, the run is skipped: {}", name, e.getMessage());
            return Optional.empty();
        }
        return granted.<SimpleLock>map(l -> RatchetSimpleLock.start(locks, configuration, l, started));
    }

    /**
     * The lease of the innermost lock that a {@code RatchetLockProvider} gave this thread and that is not
     * unlocked yet, as last extended; empty when there is none, or once an extension found it lost.
     */
    public static Optional<Lease> currentLease() {
        LeaseChain chain = LeaseChain.innermost();
        return chain == null || chain.lost() ? Optional.empty() : Optional.of(chain.lease());
    }

    /**
     * The fencing token of {@link #currentLease()}: what a task running under a lock passes to the resources
     * it changes. Held per thread, like ShedLock's {@code LockExtender}: read it on the thread that
     * {@code lock} was called on (where ShedLock runs the task), not from asynchronous work.
     *
     * @throws IllegalStateException when this thread holds no lock of this provider, or the lease is lost
     */
    public static long currentFencingToken() {
        LeaseChain chain = LeaseChain.innermost();
        if (chain == null) {
            throw new IllegalStateException("this thread holds no lock from a RatchetLockProvider: read the fencing token"
                    + " in a task that such a provider locked, on the thread that locked it");
        }
        if (chain.lost()) {
            throw new IllegalStateException("the lease on lock '" + chain.lease().name() + "' is lost (an extension found it"
                    + " run out or taken over): stop acting under it");
        }
        return chain.lease().fencingToken();
    }

    private Optional<Lease> acquire(String name, Duration lease) {
        handing.readLock().lock();
        try {
            Optional<Lease> granted = locks.tryAcquire(name, lease);
            granted.ifPresent(l -> handedOut.merge(Keys.normalize(name), l.fencingToken(), Math::max));
            return granted;
        } finally {
            handing.readLock().unlock();
        }
    }

    /** See the class comment, "In doubt". */
    private Optional<Lease> resolveInDoubt(String name, Duration lease, UnknownOutcomeException unanswered) {
        try {
            Optional<LockHolder> holder = locks.holder(name);
            if (holder.isPresent() && holder.get().owner().equals(locks.owner()) && claim(name, holder.get().fencingToken())) {
                Lease adopted = locks.renew(name, holder.get().index(), lease);
                log.info("Lock '{}' taken by an acquire that got no answer; adopted with fencing token {}", name,
                        adopted.fencingToken());
                return Optional.of(adopted);
            }
        } catch (LeaseLostException | UnknownOutcomeException | ClusterUnavailableException e) {
            unanswered.addSuppressed(e);
        }
        log.warn("Lock '{}' not taken, the run is skipped: the acquire got no answer ({}); if it was applied, the lease"
                + " runs out after lockAtMostFor", name, unanswered.getMessage());
        return Optional.empty();
    }

    /**
     * Whether {@code token} is a grant of lock {@code name} this instance has never handed out; if so it is
     * recorded as handed out now. Tokens rise from grant to grant, so a grant above every token handed out
     * is none of them: not a lock a task of this process holds, nor one kept for {@code lockAtLeastFor}.
     */
    private boolean claim(String name, long token) {
        handing.writeLock().lock();
        try {
            String key = Keys.normalize(name);
            Long highest = handedOut.get(key);
            if (highest != null && highest >= token) {
                return false;
            }
            handedOut.put(key, token);
            return true;
        } finally {
            handing.writeLock().unlock();
        }
    }

    @Override
    public String toString() {
        return "RatchetLockProvider{owner='" + locks.owner() + "', prefix='" + namePrefix + "'}";
    }
}
