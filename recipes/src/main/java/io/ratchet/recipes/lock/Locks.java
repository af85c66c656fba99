package io.ratchet.recipes.lock;

import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.common.Failures;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.PutOptions;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Keys;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Leased locks with fencing tokens, built only from {@link RatchetClient}'s public primitives. A lock
 * is the item {@code locks/<name>} with the value {@code {"owner": ...}}:
 * <ul>
 *   <li>acquire is a create-only put with a time-to-live that treats an item expired at cluster time
 *       as absent; the acquiring entry's index is the {@link Lease#fencingToken() fencing token};</li>
 *   <li>renew is a put at the lease's current index with a new time-to-live (refused once the lease
 *       has run out); release is a delete at that index;</li>
 *   <li>a waiter sleeps on a watch of the lock item, not on a polling loop.</li>
 * </ul>
 *
 * <p>Guarantee: at any cluster time at most one owner holds a lock, and every grant's fencing token
 * is greater than every earlier grant's. Expiry is judged on cluster time (the leaders' clocks). This
 * process's monotonic clock can only shorten a lease, never lengthen it: an acquire or renewal
 * returns a lease only if its answer came back within the lease's duration of the moment the request
 * was sent, so the holder may count on {@link Lease#duration()} from the moment it called (to within
 * the nodes' clock skew). A later answer (after a leader change it can come seconds late, when a later
 * holder may already have the lock) is given back, not returned.
 *
 * <p>What the caller owes: balance every acquire that returned a lease with a {@link #release}, or let
 * the lease run out; renew well within {@link Lease#duration()} of the moment you called acquire or the
 * last renew, timed on your monotonic clock; pass the fencing token to every resource
 * the lock protects, which must refuse a token lower than the highest it has seen (a holder that
 * paused past its lease may not know yet that it lost the lock). Locks are not re-entrant: an owner
 * that already holds a lock is refused like anyone else. Thread-safe; threads that share an instance
 * share its owner id, so give each independent holder its own instance if the owner should tell them apart.
 *
 * <p>Errors: {@link InvalidRequestException} for a bad name, lease or wait (nothing written);
 * {@link LeaseLostException} when a renew or release finds the lease gone, or a renewal was answered
 * too late to be used; {@link UnknownOutcomeException}
 * when an acquire, renew or release got no answer (it may have been applied: {@link #holder} shows who
 * holds the lock now); {@link ClusterUnavailableException} when {@link #holder} got no answer.
 */
public final class Locks extends LockKind<Lease> {
    /** The {@code kind} this recipe's lock events carry ({@link io.ratchet.client.ClientEvents}). */
    static final String KIND = "lock";
    /** Lock items live under this prefix. */
    public static final String PREFIX = "locks/";
    /** A waiter re-tries at least this often even without news from its watch. */
    static final Duration MAX_WAIT_SLICE = Duration.ofSeconds(30);

    private final RatchetClient client;
    private final LeaseKeeper keeper;

    /** Locks with {@link LockOptions#defaults()}: a fresh owner id and a one-hour maximum lease. */
    public Locks(RatchetClient client) {
        this(client, LockOptions.defaults());
    }

    public Locks(RatchetClient client, LockOptions options) {
        this(client, options, System::nanoTime);
    }

    /** With {@code nanoClock} in place of {@link System#nanoTime()}, for tests that make answers come late. */
    Locks(RatchetClient client, LockOptions options, LongSupplier nanoClock) {
        super(options);
        this.keeper = new LeaseKeeper(client, options, nanoClock);
        this.client = client;
    }

    /** Lock {@code name} as a {@link Lock}: the calls of this class with the name filled in. */
    public Lock<Lease> lock(String name) {
        key(name);
        return new NamedLock<>(name, this, lease -> tryAcquireAsync(name, lease), (lease, wait) -> acquireAsync(name, lease, wait),
                () -> holderAsync(name).thenApply(h -> h.stream().toList()));
    }

    /**
     * The key of the item that holds lock {@code name}.
     *
     * @throws InvalidRequestException when the name is empty or makes a key the protocol refuses
     */
    public static String key(String name) {
        if (name == null || name.isEmpty()) {
            throw invalid("a lock name must not be empty");
        }
        String key = PREFIX + name;
        try {
            return Keys.validateWritable(key);
        } catch (InvalidCommandException e) {
            throw invalid("lock name '" + LeaseKeeper.abbreviate(name) + "' does not make a valid key: " + e.getMessage());
        }
    }

    // ---- acquire

    /**
     * Takes the lock if it is free at cluster time (absent, or its holder's lease ran out), for
     * {@code lease}; completes with empty when another owner holds it, or when the grant was answered
     * too late to be used (see the class comment). One attempt, no waiting.
     */
    public CompletableFuture<Optional<Lease>> tryAcquireAsync(String name, Duration lease) {
        return checked(() -> {
            String key = key(name);
            Duration granted = keeper.granted(lease);
            long sent = keeper.now();
            return LockEvents.acquire(client, KIND, name, System.nanoTime(), attempt(key, granted).thenCompose(r -> r.successful()
                    ? inTime(name, LockHolder.ownerOf(r.item()), r, granted, sent)
                    : CompletableFuture.completedFuture(Optional.<Lease>empty())));
        });
    }

    /**
     * As {@link #tryAcquireAsync}, but while another owner holds the lock, waits for it for up to
     * {@code waitTimeout}: on a watch of the lock item (woken by a release, a renewal, or the sweep of an
     * expired holder), then again after a random pause (full jitter) so that waiters woken together do
     * not retry together. Completes with empty when the wait runs out; a wait of zero is one attempt.
     * It never takes longer than {@code waitTimeout} plus {@link RatchetClient#WATCH_SLACK}, leader
     * changes included: an attempt still unanswered then is abandoned, and should it be granted after
     * all, the grant is given back as soon as its answer arrives.
     */
    public CompletableFuture<Optional<Lease>> acquireAsync(String name, Duration lease, Duration waitTimeout) {
        return checked(() -> {
            String key = key(name);
            Duration granted = keeper.granted(lease);
            return LockEvents.acquire(client, KIND, name, System.nanoTime(),
                    acquireLoop(name, key, granted, keeper.deadline(waitTimeout), 0));
        });
    }

    private CompletableFuture<Optional<Lease>> acquireLoop(String name, String key, Duration lease, long deadline, int attempt) {
        long sent = keeper.now();
        // An attempt still unanswered by the end is abandoned; should it be granted after all, it is given back.
        return keeper.within(deadline + RatchetClient.WATCH_SLACK.toNanos(), () -> attempt(key, lease), late -> {
            if (late.successful()) {
                keeper.giveBack(key, late.index(), late.createdIndex());
            }
        }).thenCompose(answer -> {
            if (answer.isEmpty()) {
                return CompletableFuture.completedFuture(Optional.<Lease>empty());
            }
            CompareExchangeResult r = answer.get();
            if (r.successful()) {
                // A grant answered too late was given back: the lock is free again, so no watch.
                return inTime(name, LockHolder.ownerOf(r.item()), r, lease, sent).thenCompose(held ->
                        held.isPresent() || keeper.past(deadline)
                        ? CompletableFuture.completedFuture(held)
                        : keeper.pause(attempt + 1, deadline)
                                .thenCompose(ignored -> acquireLoop(name, key, lease, deadline, attempt + 1)));
            }
            long remaining = TimeUnit.NANOSECONDS.toMillis(deadline - keeper.now());
            if (remaining <= 0) {
                return CompletableFuture.completedFuture(Optional.<Lease>empty());
            }
            // The watch ends by what is left of the wait plus the watch slack, failover or not.
            return client.watchAsync(key, r.index(), Duration.ofMillis(watchFor(r, remaining)))
                    .handle((watched, error) -> {
                        if (error != null && Failures.unwrap(error) instanceof InvalidRequestException bad) {
                            throw bad;
                        }
                        return null; // a change, a timeout or a lost watch: in every case, try again
                    })
                    .thenCompose(ignored -> keeper.pause(attempt + 1, deadline))
                    .thenCompose(ignored -> acquireLoop(name, key, lease, deadline, attempt + 1));
        });
    }

    /** How long to watch a held lock: until the wait ends, a slice passes, or (by our clock) its lease runs out. */
    private static long watchFor(CompareExchangeResult held, long remainingMillis) {
        long wait = Math.min(remainingMillis, MAX_WAIT_SLICE.toMillis());
        if (held.expiresAt() != 0) {
            // Only a hint for when to ask again: the attempt itself is judged on cluster time, and if our
            // clock runs slow, the sweep that deletes the expired holder wakes the watch anyway.
            wait = Math.min(wait, held.expiresAt() - System.currentTimeMillis());
        }
        return Math.max(1, wait);
    }

    private CompletableFuture<CompareExchangeResult> attempt(String key, Duration lease) {
        return client.putAsync(key, ownerValue(owner()), 0, PutOptions.none().ttl(lease).expiredCountsAsAbsent());
    }

    /**
     * The lease a successful acquire of {@code owner}'s grants, if its answer came back in time to be
     * used (see {@link LeaseKeeper}); a grant answered later is given back, and the result is empty.
     */
    private CompletableFuture<Optional<Lease>> inTime(String name, String owner, CompareExchangeResult r, Duration lease,
                                                      long sentNanos) {
        if (keeper.inTime(sentNanos, lease)) {
            return CompletableFuture.completedFuture(Optional.of(
                    new Lease(name, owner, r.createdIndex(), r.index(), Instant.ofEpochMilli(r.expiresAt()), lease)));
        }
        return keeper.giveBack(key(name), r.index(), r.createdIndex()).thenApply(ignored -> Optional.empty());
    }

    // ---- renew, release

    /**
     * Extends the lease to {@code duration} after the renewal's cluster time. Succeeds only while the
     * lock item still has {@link Lease#currentIndex()} and the lease has not run out; the returned lease
     * has a new current index and expiry and the same fencing token.
     *
     * @throws LeaseLostException (through the future) when the lease ran out, was released or was taken over
     */
    @Override
    public CompletableFuture<Lease> renewAsync(Lease lease, Duration duration) {
        return checked(() -> {
            String key = key(requireLease(lease).name());
            Duration granted = keeper.granted(duration);
            return LockEvents.renew(client, KIND, lease.name(), lease.fencingToken(), System.nanoTime(), keeper.renew(lease.name(), key, ownerValue(lease.owner()), lease.currentIndex(), lease.fencingToken(),
                    granted, now -> CompletableFuture.failedFuture(
                            new LeaseLostException(lease.name(), lease.currentIndex(), holderOf(lease.name(), now))),
                    answered -> { })
                    .thenApply(r -> new Lease(lease.name(), lease.owner(), r.createdIndex(), r.index(),
                            Instant.ofEpochMilli(r.expiresAt()), granted)));
        });
    }

    /**
     * Renews the lease that lock {@code name} has at {@code index}, for a holder that kept only the index
     * (a command line, a process that restarted): reads the item for its owner and token, then renews at
     * that index, which is the atomic check.
     *
     * @throws LeaseLostException (through the future) when the lock is not at {@code index}, or its lease ran out
     */
    @Override
    public CompletableFuture<Lease> renewAsync(String name, long index, Duration duration) {
        return checked(() -> {
            String key = key(name);
            keeper.granted(duration);
            requireIndex(name, index);
            return client.getAsync(key).thenCompose(item -> {
                if (item.isEmpty() || item.get().index() != index) {
                    throw new LeaseLostException(name, index, holderOf(name, item.orElse(null)));
                }
                Item held = item.get();
                Lease lease = new Lease(name, LockHolder.ownerOf(held), held.createdIndex(), index,
                        Instant.ofEpochMilli(held.expiresAt()), duration);
                return renewAsync(lease, duration);
            });
        });
    }

    /**
     * Frees the lock: deletes its item at {@link Lease#currentIndex()}. A release after the lease ran out
     * but before the sweeper removed it still succeeds (nobody else was let in meanwhile).
     *
     * @throws LeaseLostException (through the future) when the lock was swept, released or taken over
     */
    @Override
    public CompletableFuture<Void> releaseAsync(Lease lease) {
        return checked(() -> releaseAsync(requireLease(lease).name(), lease.currentIndex()));
    }

    /** As {@link #releaseAsync(Lease)}, for a holder that kept only the lock's name and index. */
    @Override
    public CompletableFuture<Void> releaseAsync(String name, long index) {
        return checked(() -> {
            String key = key(name);
            requireIndex(name, index);
            return LockEvents.release(client, KIND, name, 0, client.writeAsync(new Command.Delete(key, index)).thenApply(r -> {
                if (!r.successful()) {
                    throw new LeaseLostException(name, index, holderOf(name, r.item()));
                }
                return null;
            }));
        });
    }

    /**
     * Who holds lock {@code name} now (a linearizable read), or empty when nobody does. A holder whose
     * lease ran out but whose item the sweeper has not removed yet is still shown, with its expiry.
     */
    public CompletableFuture<Optional<LockHolder>> holderAsync(String name) {
        return checked(() -> client.getAsync(key(name)).thenApply(item -> item.map(i -> holderOf(name, i))));
    }

    // ---- blocking twins

    public Optional<Lease> tryAcquire(String name, Duration lease) {
        return RatchetClient.await(tryAcquireAsync(name, lease));
    }

    public Optional<Lease> acquire(String name, Duration lease, Duration waitTimeout) {
        return RatchetClient.await(acquireAsync(name, lease, waitTimeout));
    }

    public Optional<LockHolder> holder(String name) {
        return RatchetClient.await(holderAsync(name));
    }

    // ---- values and checks

    private static Lease requireLease(Lease lease) {
        if (lease == null) {
            throw invalid("no lease given");
        }
        requireIndex(lease.name(), lease.currentIndex());
        if (lease.owner() == null || lease.owner().isEmpty()) {
            throw invalid("the lease on lock '" + lease.name() + "' names no owner");
        }
        return lease;
    }

    private static void requireIndex(String name, long index) {
        LeaseKeeper.requireIndex("lock", name, index);
    }

    private static Map<String, String> ownerValue(String owner) {
        return Map.of("owner", owner);
    }

    private static LockHolder holderOf(String name, Item item) {
        return item == null ? null : LockHolder.of(name, item);
    }

    private static <T> CompletableFuture<T> checked(Supplier<CompletableFuture<T>> call) {
        return LeaseKeeper.checked(call);
    }

    private static InvalidRequestException invalid(String message) {
        return LeaseKeeper.invalid(message);
    }
}
