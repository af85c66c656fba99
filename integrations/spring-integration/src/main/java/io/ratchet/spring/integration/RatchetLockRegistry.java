package io.ratchet.spring.integration;

import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Keys;
import io.ratchet.recipes.lock.Locks;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * Spring Integration's {@link org.springframework.integration.support.locks.LockRegistry} over Ratchet's
 * leased locks ({@link Locks}): the locks it hands out ({@link RatchetLock}) exclude the threads of this
 * process with a local {@link java.util.concurrent.locks.ReentrantLock} and other processes with a Ratchet
 * lease, which runs out on cluster time if its holder dies. It is a drop-in for {@code JdbcLockRegistry}
 * or {@code RedisLockRegistry}, including under {@code LockRegistryLeaderInitiator}, and adds what they
 * lack: every grant has a {@linkplain RatchetLock#fencingToken() fencing token}.
 *
 * <p>Keys. A lock key may be any object; its {@code toString()}, after the registry's prefix
 * ({@value #DEFAULT_PREFIX} unless told otherwise), is the Ratchet lock's name, so the key {@code "orders"}
 * is the lock {@code spring/orders}, held in the item {@code locks/spring/orders}. Ratchet keys compare
 * case-insensitively: keys that differ only in case are one lock (and one local lock object). A key that
 * cannot make a valid Ratchet key (empty with an empty prefix, or too long) is refused with
 * {@link IllegalArgumentException} by {@link #obtain}.
 *
 * <p>Time to live. Every acquire takes a lease of the registry's ttl ({@link #DEFAULT_TTL}, ten seconds,
 * as {@code JdbcLockRegistry.DEFAULT_TTL}, unless given to the constructor), or of the ttl passed to
 * {@link DistributedLock#lock(Duration)} / {@link DistributedLock#tryLock(Duration, Duration)}. A holder
 * keeps it by {@link #renewLock(Object)}, or by locking again from the holding thread (a re-entry renews);
 * otherwise another process may take the lock once the ttl has passed in cluster time. The ttl is at most the
 * {@link io.ratchet.recipes.lock.LockOptions#maxLease() maximum lease} of the {@link Locks} instance.
 *
 * <p>Owners. Each registry should have a {@link Locks} instance of its own (the {@link RatchetClient}
 * constructors make one, with a fresh owner id): two registries that shared one would share its owner.
 * Thread-safe.
 *
 * <p>Not supported: {@link #setRenewalTaskScheduler} (no background renewal, as in {@code JdbcLockRegistry});
 * renew from the holding thread instead.
 */
public class RatchetLockRegistry implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {
    /** The ttl of a lease unless told otherwise: ten seconds, as {@code JdbcLockRegistry.DEFAULT_TTL}. */
    public static final Duration DEFAULT_TTL = Duration.ofSeconds(10);
    /** The prefix of the lock names unless told otherwise. */
    public static final String DEFAULT_PREFIX = "spring/";
    /** The pause after an attempt that got no answer, unless told otherwise (as {@code JdbcLockRegistry}'s). */
    public static final Duration DEFAULT_IDLE_BETWEEN_TRIES = Duration.ofMillis(100);

    private final Locks locks;
    private final String prefix;
    private final Duration ttl;
    private final Map<String, RatchetLock> registry = new ConcurrentHashMap<>();
    private volatile Duration idleBetweenTries = DEFAULT_IDLE_BETWEEN_TRIES;

    /** Locks of {@code client} with a fresh owner id, the {@link #DEFAULT_PREFIX} and the {@link #DEFAULT_TTL}. */
    public RatchetLockRegistry(RatchetClient client) {
        this(client, DEFAULT_TTL);
    }

    /** Locks of {@code client} with a fresh owner id, the {@link #DEFAULT_PREFIX} and leases of {@code ttl}. */
    public RatchetLockRegistry(RatchetClient client, Duration ttl) {
        this(new Locks(Objects.requireNonNull(client, "client")), DEFAULT_PREFIX, ttl);
    }

    /** Over {@code locks} (its owner id and maximum lease), with the {@link #DEFAULT_PREFIX} and the {@link #DEFAULT_TTL}. */
    public RatchetLockRegistry(Locks locks) {
        this(locks, DEFAULT_PREFIX, DEFAULT_TTL);
    }

    /** Over {@code locks}, with the {@link #DEFAULT_PREFIX} and leases of {@code ttl}. */
    public RatchetLockRegistry(Locks locks, Duration ttl) {
        this(locks, DEFAULT_PREFIX, ttl);
    }

    /**
     * Over {@code locks}: lock names are {@code prefix + key.toString()} ({@code ""} for no prefix), leases
     * last {@code ttl} unless a call names its own.
     */
    public RatchetLockRegistry(Locks locks, String prefix, Duration ttl) {
        this.locks = Objects.requireNonNull(locks, "locks");
        this.prefix = Objects.requireNonNull(prefix, "prefix");
        this.ttl = Objects.requireNonNull(ttl, "ttl");
        checkTtl(ttl);
    }

    /** The lease every acquire takes unless it names its own. */
    public Duration getTtl() {
        return ttl;
    }

    public String getPrefix() {
        return prefix;
    }

    /** The {@link Locks} this registry's locks are made of. */
    public Locks getLocks() {
        return locks;
    }

    public Duration getIdleBetweenTries() {
        return idleBetweenTries;
    }

    /**
     * The pause after an attempt that failed for want of an answer (no leader, an unanswered write) before
     * the next; 100 ms unless set. A waiter for a held lock does not poll: it sleeps on a watch of the lock.
     */
    public void setIdleBetweenTries(Duration idleBetweenTries) {
        if (idleBetweenTries == null || idleBetweenTries.isNegative()) {
            throw new IllegalArgumentException("'idleBetweenTries' must be 0 or more, not " + idleBetweenTries);
        }
        this.idleBetweenTries = idleBetweenTries;
    }

    /** The Ratchet lock name of {@code lockKey}: the prefix and {@code lockKey.toString()}. */
    public String lockName(Object lockKey) {
        if (lockKey == null) {
            throw new IllegalArgumentException("'lockKey' must not be null");
        }
        String name = prefix + lockKey;
        try {
            Locks.key(name);
        } catch (InvalidRequestException e) {
            throw new IllegalArgumentException("lock key '" + abbreviate(String.valueOf(lockKey)) + "' does not make a valid"
                    + " Ratchet lock name (prefix '" + prefix + "'): " + e.getMessage(), e);
        }
        return name;
    }

    /**
     * The lock for {@code lockKey}: the same object for the same key (compared as Ratchet compares keys, without
     * case) until {@link #expireUnusedOlderThan} drops it.
     *
     * @throws IllegalArgumentException when the key is null or does not make a valid Ratchet lock name
     */
    @Override
    public RatchetLock obtain(Object lockKey) {
        String name = lockName(lockKey);
        return registry.computeIfAbsent(Keys.normalize(name), normalized -> new RatchetLock(this, locks, name));
    }

    /**
     * Drops the local lock objects last acquired (or created, or released) more than {@code age} milliseconds
     * ago that no thread holds or waits for. A key obtained afterwards gets a new object; the Ratchet lock is
     * unaffected.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.nanoTime();
        long ageNanos = TimeUnit.MILLISECONDS.toNanos(age);
        registry.values().removeIf(lock -> now - lock.lastUsedNanos() > ageNanos && lock.isIdle());
    }

    /**
     * Renews, for the registry's ttl, the lease of the lock the calling thread holds for {@code lockKey}.
     *
     * @throws IllegalMonitorStateException when the calling thread does not hold it (as {@code JdbcLockRegistry})
     * @throws IllegalStateException        when its lease was lost: it ran out, or another owner took it over
     *                                      (as {@code JdbcLockRegistry} and {@code RedisLockRegistry})
     */
    @Override
    public void renewLock(Object lockKey) {
        renewLock(lockKey, ttl);
    }

    /** As {@link #renewLock(Object)}, for {@code ttl}. */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        obtain(lockKey).renew(checkTtl(ttl));
    }

    /** A lease the {@link Locks} instance grants: 1 ms up to its maximum lease. */
    Duration checkTtl(Duration ttl) {
        if (ttl == null || ttl.toMillis() < 1) {
            throw new IllegalArgumentException("a lock's ttl must be at least 1 ms, not " + ttl);
        }
        Duration max = locks.options().maxLease();
        if (ttl.compareTo(max) > 0) {
            throw new IllegalArgumentException("a lock's ttl of " + ttl + " is above the maximum lease of " + max);
        }
        return ttl;
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...(" + s.length() + " chars)";
    }

    @Override
    public String toString() {
        return "RatchetLockRegistry[owner=" + locks.owner() + ", prefix='" + prefix + "', ttl=" + ttl + "]";
    }
}
