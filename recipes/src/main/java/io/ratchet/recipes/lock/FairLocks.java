package io.ratchet.recipes.lock;

import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Limits;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * Fair (first come, first served) leased locks with fencing tokens, built only from
 * {@link RatchetClient}'s public primitives, as Curator's {@code InterProcessMutex} and etcd's
 * {@code concurrency.Mutex} are built on theirs. {@link Locks} lets waiters race for one item; here each
 * waiter takes a place in a queue and the lock goes to the places in order.
 *
 * <p>Lock {@code NAME} is a queue of items {@code fair-locks/NAME/<16 hex digits>}, each
 * {@code {"owner": ...}} with a lease:
 * <ul>
 *   <li>acquire joins with a create-only put with a time-to-live; the index that created the entry is its
 *       place, and the first live entry (not expired at cluster time) in the order of places holds the lock
 *       (joins that one log entry carried share a place, and are ordered by key). When its turn comes the
 *       entry renews itself (its turn write), and that write's index is the
 *       {@link QueueLease#fencingToken() fencing token}: every later holder's is greater. (Not the place:
 *       places tie.)</li>
 *   <li>a waiter watches only its predecessor (the live entry with the next lower place), so a release, or
 *       the sweep of a holder or waiter whose lease ran out, wakes exactly one waiter: no thundering herd.
 *       It renews its own entry every third of its lease while it waits, so a waiter that dies leaves the
 *       queue when its lease runs out, and is skipped;</li>
 *   <li>renew is a put at the lease's current index (refused once it has run out): the index moves, the
 *       place and token stay; release is a delete at that index. The next waiter's watch fires on it.</li>
 * </ul>
 * {@link LeaseQueue} has the design and the reasons; the guarantees:
 *
 * <p><b>Guarantee.</b> At any cluster time at most one owner holds a lock, and every holder's fencing token
 * is greater than every earlier holder's. The lock goes to live entries in the order of their places: an
 * entry is passed over only once its lease has run out at cluster time or it was removed. Expiry is judged
 * on cluster time; this process's monotonic clock only ever shortens a lease: a place whose joining or
 * renewal was answered later than its lease after it was sent is given back, and an acquire returns a
 * lease only if the write that last extended it was answered within the lease of being sent. That write
 * was sent after you called, so the lease runs for at least its duration from the moment you called (to
 * within the nodes' clock skew), as with {@link Locks}; and since that write is the turn write, made when
 * the turn came, a lease returned after a long wait still has nearly all of its duration left.
 *
 * <p><b>What the caller owes</b>, as with {@link Locks}: release every lease acquired or let it run out;
 * renew in time, on your monotonic clock; pass the fencing token to every protected resource, which must
 * refuse a token lower than the highest it has seen. Not re-entrant: a second acquire by the same owner
 * queues behind the first. Thread-safe; threads sharing an instance share its owner id.
 *
 * <p><b>Errors:</b> {@link InvalidRequestException} for a bad name, lease or wait (nothing written);
 * {@link LeaseLostException} when a renew or release finds the lease gone, a renewal was answered too late,
 * or an {@link #await} found its place lost; {@link UnknownOutcomeException} when a write got no answer (it
 * may have been applied: a place then lapses with its lease, and {@link #holder} shows who holds the lock);
 * {@link ClusterUnavailableException} when a read got no answer. An acquire that fails after it joined the
 * queue gives its place back before it reports the error.
 *
 * <p>Costs: an acquire of a free lock is two puts (join, turn) and one list; a waiter costs a watch, a renewal every
 * third of its lease, and a list each time its predecessor leaves. A queue is listed whole, a page of
 * {@value Limits#MAX_PAGE_SIZE} items at a time, so very long queues (thousands) make each wake-up slower.
 */
public final class FairLocks extends QueueLocks {
    /** Lock queues live under this prefix: {@code fair-locks/<name>/<entry>}. */
    public static final String PREFIX = "fair-locks/";

    /** Fair locks with {@link LockOptions#defaults()}: a fresh owner id and a one-hour maximum lease. */
    public FairLocks(RatchetClient client) {
        this(client, LockOptions.defaults());
    }

    public FairLocks(RatchetClient client, LockOptions options) {
        this(client, options, System::nanoTime, Limits.MAX_PAGE_SIZE);
    }

    /** With {@code nanoClock} for {@link System#nanoTime()} and a smaller listing page, for tests. */
    FairLocks(RatchetClient client, LockOptions options, LongSupplier nanoClock, int pageSize) {
        super(new LeaseQueue(client, options, nanoClock, PREFIX, "lock", false, pageSize));
    }

    /** Lock {@code name} as a {@link Lock}: the calls of this class with the name filled in. */
    public Lock<QueueLease> lock(String name) {
        queue.queuePrefix(name);
        return new NamedLock<>(name, this, lease -> tryAcquireAsync(name, lease), (lease, wait) -> acquireAsync(name, lease, wait),
                () -> holderAsync(name).thenApply(h -> h.stream().toList()));
    }

    /**
     * The prefix of lock {@code name}'s queue entries, {@code fair-locks/<name>/}; on a cluster of several
     * groups {@code fair-locks/{<name>}/}, so that the whole queue is in one group (unless the name holds a
     * hash tag of its own).
     *
     * @throws InvalidRequestException when the name is empty or makes keys the protocol refuses
     */
    public String queuePrefix(String name) {
        return queue.queuePrefix(name);
    }

    // ---- acquire (renew, release and the queue: QueueLocks)

    /**
     * Takes the lock for {@code lease} if nobody holds it and nobody is waiting for it (no live entry is
     * queued): joins the queue and, unless it is first, leaves it again. Completes with empty when it was
     * not first, or when joining was answered too late to be used. It never jumps the queue.
     */
    public CompletableFuture<Optional<QueueLease>> tryAcquireAsync(String name, Duration lease) {
        return queue.tryAcquire(name, lease, 1);
    }

    /**
     * Joins the queue and waits up to {@code waitTimeout} for the lock; completes with empty (having left
     * the queue) if its turn did not come by then. A wait of 0 looks once. Should the place be lost meanwhile
     * (a renewal refused or answered too late), it joins again at the back. Ends by {@code waitTimeout} plus
     * {@link RatchetClient#WATCH_SLACK}, leader changes included: a call still unanswered then is abandoned,
     * and a place it makes after all is given back as soon as its answer arrives.
     */
    public CompletableFuture<Optional<QueueLease>> acquireAsync(String name, Duration lease, Duration waitTimeout) {
        return queue.acquire(name, lease, waitTimeout, 1);
    }

    /**
     * Joins the queue and returns the place at once, for a caller that wants to know its place before it
     * waits (or to wait later, in {@link #awaitAsync}). The entry lapses with its lease unless awaited; a
     * place answered later than its lease is given back and fails with {@link LeaseLostException}.
     */
    public CompletableFuture<Ticket> enqueueAsync(String name, Duration lease) {
        return queue.enqueue(name, lease);
    }

    /**
     * Waits up to {@code waitTimeout} for {@code ticket}'s turn, renewing its entry meanwhile. Completes with
     * the lease when it comes; with empty (having left the queue) when the wait ends first while the place
     * was certainly still held, so the caller stood in the queue at {@link Ticket#place()} until it gave up;
     * with {@link LeaseLostException} when the place was lost (it ran out or was removed) or could not be
     * confirmed held at the end (a renewal still unanswered). Unlike {@link #acquireAsync} it never joins
     * again, so a caller always knows which place it waited in. Await a ticket once.
     */
    public CompletableFuture<Optional<QueueLease>> awaitAsync(Ticket ticket, Duration waitTimeout) {
        return queue.await(ticket, waitTimeout, 1);
    }

    /** Gives up a place without waiting for it (a delete of its entry); completes either way. */
    public CompletableFuture<Void> leaveAsync(Ticket ticket) {
        return LeaseQueue.checked(() -> {
            if (ticket == null || !QueueListing.isEntryKey(queue.queuePrefix(ticket.name()), ticket.key())) {
                throw LeaseQueue.invalid("not a ticket of a fair lock: " + ticket);
            }
            return queue.giveBack(ticket.key(), ticket.currentIndex(), ticket.place());
        });
    }

    /**
     * Who holds lock {@code name} now: the live entry with the lowest place (a linearizable listing), or
     * empty when the queue is empty. An entry whose lease ran out but that the sweeper has not removed yet
     * may still be shown, with its expiry, unless this instance has seen cluster time pass it.
     */
    public CompletableFuture<Optional<LockHolder>> holderAsync(String name) {
        return queueAsync(name).thenApply(entries -> entries.stream().findFirst().map(QueueEntry::holder));
    }

    // ---- blocking twins

    public Optional<QueueLease> tryAcquire(String name, Duration lease) {
        return RatchetClient.await(tryAcquireAsync(name, lease));
    }

    public Optional<QueueLease> acquire(String name, Duration lease, Duration waitTimeout) {
        return RatchetClient.await(acquireAsync(name, lease, waitTimeout));
    }

    public Ticket enqueue(String name, Duration lease) {
        return RatchetClient.await(enqueueAsync(name, lease));
    }

    public Optional<QueueLease> await(Ticket ticket, Duration waitTimeout) {
        return RatchetClient.await(awaitAsync(ticket, waitTimeout));
    }

    public void leave(Ticket ticket) {
        RatchetClient.await(leaveAsync(ticket));
    }

    public Optional<LockHolder> holder(String name) {
        return RatchetClient.await(holderAsync(name));
    }
}
