package io.ratchet.bench;

import io.ratchet.client.Backoff;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Groups;
import io.ratchet.recipes.counter.ShardedCounter;
import io.ratchet.recipes.lock.FairLocks;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.recipes.lock.QueueLease;
import io.ratchet.recipes.session.Retry;
import io.ratchet.recipes.session.RetryEvent;
import io.ratchet.recipes.session.RetryExhaustedException;
import io.ratchet.protocol.Item;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The workloads of {@code scripts/bench}, the same ones peerbench runs against etcd and ZooKeeper, built
 * only from the public client API. Each client of a run repeats one operation; an operation either
 * commits, or gives up after {@link #MAX_ATTEMPTS} conditional writes ("exhausted").
 */
public enum Workload {
    /** Create-only puts of fresh keys: a unique-email sign-up storm. */
    RESERVE,
    /**
     * Bulk loading: a transaction of {@link #BATCH} create-only puts of fresh keys, all or none. One commit
     * is one transaction ({@code BATCH} reservations): how {@code scripts/fill} loads tens of millions.
     */
    RESERVE_BATCH,
    /** Each client reads its own counter, then puts the increment at the index it read. */
    UPDATE,
    /**
     * Every client increments one shared counter: read once, then a bounded, jittered retry loop that
     * recomputes from the value a failed put returns, with no extra read.
     */
    HOT,
    /**
     * The shared counter of {@link #HOT}, but each client increments it through {@link Retry#update}, one
     * {@code Retry} per client instance (with {@link #HOT_BACKOFF}): the increments of an instance's clients
     * that arrive while a put of the counter is in flight combine into its next put. An operation's
     * attempts are the puts its increment took part in.
     */
    HOT_UPDATE,
    /**
     * Every client adds 1 to one shared counter ({@link RatchetClient#add}): the hot counter of {@link #HOT}
     * without a retry loop, since an add has no condition to fail. One commit is one add, of one attempt.
     */
    ADD,
    /**
     * Every client adds 1 to a {@link ShardedCounter} of {@link #SHARDS} shards, a shard drawn at random for
     * each add: on a cluster of several groups the shards spread over them.
     */
    SHARDED_ADD,
    /** Linearizable gets of each client's own key. */
    READ,
    /**
     * Acquire and release of per-client locks through the lock recipe ({@link RatchetClient#locks()}): a
     * create-only put with a lease, then a delete at the acquiring index. One commit is one acquire plus
     * one release.
     */
    LOCK,
    /**
     * Every client contends for one fair lock ({@link FairLocks}): it joins the lock's queue, waits its turn
     * (up to {@link #FAIR_LOCK_WAIT}) and releases at once. One commit is one acquisition plus its release;
     * latency is the time in the queue plus the release. A wait that runs out counts as exhausted.
     */
    FAIR_LOCK,
    /**
     * A transaction of two create-only puts whose keys are in two different groups when the cluster has
     * several (a transfer's shape): on one group one entry, on several a transaction across groups.
     */
    PAIR;

    /** The most conditional writes one update or increment tries before it counts as exhausted (as peerbench). */
    public static final int MAX_ATTEMPTS = 64;
    /** The shards of the {@link #SHARDED_ADD} counter. */
    public static final int SHARDS = 16;
    /** The reservations of one {@link #RESERVE_BATCH} transaction. */
    public static final int BATCH = 100;
    /** The lease a bench lock is taken with; it is released long before. */
    static final Duration LOCK_LEASE = Duration.ofSeconds(10);
    /** How long a fair-lock client waits for its turn before it gives up (an exhausted operation). */
    static final Duration FAIR_LOCK_WAIT = Duration.ofSeconds(10);
    /**
     * The hot loop's n-th pause (after a refusal of a put made with fresh state): up to min(50, 2^n) ms,
     * as peerbench's loop pauses, so the figures compare.
     */
    static final Backoff HOT_BACKOFF = new Backoff(Duration.ofMillis(2), Duration.ofMillis(50));

    /** What one operation came to. */
    public record Outcome(boolean committed, int attempts) {
    }

    /** One client's repeated operation. */
    @FunctionalInterface
    public interface Operation {
        Outcome run();
    }

    public static Workload parse(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("workload '" + name + "' is not one of reserve, reserve-batch, update, hot, hot-update,"
                    + " add, sharded-add, read, lock, fair-lock, pair");
        }
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * Creates what the run's clients work on (counters, the keys they read) under {@code bench/<run>/},
     * and returns client {@code n}'s operation factory. Client {@code n} works through
     * {@code instances[n % instances.size()]}: one shared instance is one process's threads, one instance
     * each is as many processes. {@code stopping} tells a retry loop to give up at the end of the run.
     */
    public Clients prepare(List<RatchetClient> instances, String run, int clients, BooleanSupplier stopping) {
        return prepare(instances, run, clients, stopping, new java.util.concurrent.ConcurrentHashMap<>());
    }

    /**
     * As above; a reserve client also records in {@code acknowledged}, under its key prefix, the sequence
     * numbers of the keys the cluster acknowledged creating: each must be in the cluster from then on,
     * whatever happens to the nodes ({@code ratchet bench --acked}).
     */
    public Clients prepare(List<RatchetClient> instances, String run, int clients, BooleanSupplier stopping,
                           java.util.Map<String, java.util.BitSet> acknowledged) {
        String prefix = "bench/" + run + "/";
        RatchetClient setup = instances.get(0);
        switch (this) {
            case UPDATE, READ -> {
                for (int i = 0; i < clients; i++) {
                    setup.put(prefix + "u-" + i, 0, 0);
                }
            }
            case HOT, HOT_UPDATE -> setup.put(prefix + "hot", 0, 0);
            default -> {
            }
        }
        // hot-update: one Retry per client instance, so that the increments of the clients sharing it combine.
        List<Retry> retries = this == HOT_UPDATE
                ? instances.stream().map(c -> Retry.of(c).withBackoff(HOT_BACKOFF)).toList() : List.of();
        return n -> {
            RatchetClient client = instances.get(n % instances.size());
            return switch (this) {
                case RESERVE -> reserve(client, prefix + "r-" + n + "-", acknowledged);
                case RESERVE_BATCH -> reserveBatch(client, prefix + "b-" + n + "-");
                case PAIR -> pair(client, prefix + "p-" + n + "-");
                case UPDATE -> () -> increment(client, prefix + "u-" + n, stopping);
                case HOT -> () -> increment(client, prefix + "hot", stopping);
                case HOT_UPDATE -> combinedIncrement(retries.get(n % instances.size()), prefix + "hot");
                case ADD -> () -> new Outcome(client.add(prefix + "add", 1).index() > 0, 1);
                case SHARDED_ADD -> {
                    ShardedCounter counter = new ShardedCounter(client, prefix + "sharded", SHARDS);
                    yield () -> new Outcome(counter.add(1).index() > 0, 1);
                }
                case READ -> () -> new Outcome(client.get(prefix + "u-" + n).isPresent(), 1);
                case LOCK -> lockAndRelease(new Locks(client), "bench-" + run + "-" + n);
                case FAIR_LOCK -> fairLockAndRelease(new FairLocks(client), "bench-" + run);
            };
        };
    }

    /** As above, every client through one instance. */
    public Clients prepare(RatchetClient client, String run, int clients, BooleanSupplier stopping) {
        return prepare(List.of(client), run, clients, stopping);
    }

    /** The operation of each client of a prepared run. */
    @FunctionalInterface
    public interface Clients {
        Operation client(int n);
    }

    private static Operation reserve(RatchetClient client, String keyPrefix, java.util.Map<String, java.util.BitSet> acknowledged) {
        long[] sequence = {0};
        java.util.BitSet mine = new java.util.BitSet();
        acknowledged.put(keyPrefix, mine);
        return () -> {
            int n = (int) sequence[0]++;
            boolean created = client.put(keyPrefix + n, "owner", 0).successful();
            if (created) {
                synchronized (mine) {
                    mine.set(n);
                }
            }
            return new Outcome(created, 1);
        };
    }

    private static Operation pair(RatchetClient client, String keyPrefix) {
        long[] sequence = {0};
        int groups = client.groups();
        return () -> {
            String first = keyPrefix + sequence[0]++;
            String second;
            do {
                second = keyPrefix + sequence[0]++;
            } while (groups > 1 && Groups.of(second, groups) == Groups.of(first, groups));
            return new Outcome(client.transaction(List.of(new Command.Put(first, "\"owner\"", 0, null),
                    new Command.Put(second, "\"owner\"", 0, null))).successful(), 1);
        };
    }

    private static Operation reserveBatch(RatchetClient client, String keyPrefix) {
        long[] sequence = {0};
        return () -> {
            List<Command.Op> puts = new java.util.ArrayList<>(BATCH);
            for (int i = 0; i < BATCH; i++) {
                // A transaction's put carries its value as JSON text: a plain string fails its parse.
                puts.add(new Command.Put(keyPrefix + sequence[0]++, "\"owner\"", 0, null));
            }
            return new Outcome(client.transaction(puts).successful(), 1);
        };
    }

    /**
     * Read, then conditional puts of value + 1; a refused put carries the current value and index,
     * which the next attempt starts from. After a refusal, a full-jitter pause that grows with the
     * pauses taken (the same bounds as peerbench's loop), so contenders spread out; but a put sent after
     * a pause longer than its own round trip went with state that may have aged during the pause: its
     * refusal is news rather than contention, and the next put goes at once with the state it carries.
     * Without that, a contender whose pauses had grown sent only stale puts and could not land one
     * (peerbench's ZooKeeper loop reads again after its pause for the same reason; here the stale put is
     * that read, answered by the leader without a log entry, and a put that was not stale saves it).
     */
    public static Outcome increment(RatchetClient client, String key, BooleanSupplier stopping) {
        Item current = client.get(key).orElseThrow(() -> new IllegalStateException("counter " + key + " is gone"));
        int attempts = 0;
        int pauses = 0;
        long pausedMillis = -1;
        while (attempts < MAX_ATTEMPTS && !stopping.getAsBoolean()) {
            attempts++;
            long next = Long.parseLong(current.value()) + 1;
            long sent = System.nanoTime();
            CompareExchangeResult r = client.put(key, next, current.index());
            long roundMillis = (System.nanoTime() - sent) / 1_000_000;
            if (r.successful()) {
                return new Outcome(true, attempts);
            }
            if (r.item() == null) {
                throw new IllegalStateException("counter " + key + " is gone");
            }
            current = r.item();
            if (pausedMillis > roundMillis) {
                pausedMillis = -1;
                continue;
            }
            pauses++;
            // Whole milliseconds, 0..ceiling, as peerbench's loop draws them (Thread.sleep with nanoseconds
            // rounds up to the next millisecond on Java 17, which would make every pause longer).
            pausedMillis = ThreadLocalRandom.current().nextLong(HOT_BACKOFF.ceilingNanos(pauses) / 1_000_000 + 1);
            pause(pausedMillis);
        }
        return new Outcome(false, attempts);
    }

    /**
     * An increment of the shared counter through {@code retry}'s {@link Retry#update}, which combines it
     * with the increments that other clients of the same instance make meanwhile. Its attempts are the
     * puts it took part in: a put that carries several clients' increments counts once for each of them.
     */
    private static Operation combinedIncrement(Retry retry, String key) {
        AtomicInteger attempts = new AtomicInteger();
        // This client's view of its instance's Retry (the same combining): the listener hears its increments alone.
        Retry counted = retry.withListener(e -> {
            if (e instanceof RetryEvent.Check) {
                attempts.incrementAndGet();
            }
        });
        return () -> {
            attempts.set(0);
            try {
                counted.update(key, Long.class, MAX_ATTEMPTS, v -> v + 1);
                return new Outcome(true, attempts.get());
            } catch (RetryExhaustedException e) {
                return new Outcome(false, e.attempts());
            }
        };
    }

    private static Operation lockAndRelease(Locks locks, String name) {
        return () -> {
            Optional<Lease> lease = locks.tryAcquire(name, LOCK_LEASE);
            if (lease.isEmpty()) {
                return new Outcome(false, 1);
            }
            // Released at its acquiring index (the fencing token): a later holder's lock is never removed.
            locks.release(lease.get());
            return new Outcome(true, 1);
        };
    }

    /** Waits in the one shared fair lock's queue for the turn, then releases at once (at the entry's index). */
    private static Operation fairLockAndRelease(FairLocks locks, String name) {
        return () -> {
            Optional<QueueLease> lease = locks.acquire(name, LOCK_LEASE, FAIR_LOCK_WAIT);
            if (lease.isEmpty()) {
                return new Outcome(false, 1);
            }
            locks.release(lease.get());
            return new Outcome(true, 1);
        };
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
