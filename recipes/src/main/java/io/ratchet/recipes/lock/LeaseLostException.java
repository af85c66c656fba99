package io.ratchet.recipes.lock;

import io.ratchet.client.ErrorCode;
import io.ratchet.client.RatchetException;
import java.time.Duration;
import java.util.Optional;

/**
 * A renew or release found that the lease is no longer held: it ran out (at cluster time), was
 * released, or another owner took the lock over; nothing was written. Or a renewal was answered so
 * late that the renewed lease may have run out; it was given back. Retrying the same call cannot
 * succeed; the caller must stop acting under this lease (its fencing token is outdated or about to be)
 * and acquire anew.
 */
public final class LeaseLostException extends RatchetException {
    private final String name;
    private final long index;
    private final transient LockHolder holder;

    public LeaseLostException(String name, long index, LockHolder holder) {
        this(describe(name, index, holder), name, index, holder);
    }

    private LeaseLostException(String message, String name, long index, LockHolder holder) {
        super(ErrorCode.LEASE_LOST, message, null);
        this.name = name;
        this.index = index;
        this.holder = holder;
    }

    /**
     * A renewal succeeded, but its answer did not come back within the {@code lease} it asked for, so
     * the renewed lease may have run out already; it was given back (deleted if still there).
     */
    static LeaseLostException answeredTooLate(String name, long index, Duration lease) {
        return new LeaseLostException("the lease on lock '" + name + "' at index " + index + " is lost: its renewal"
                + " was not answered within the " + lease.toMillis() + " ms lease it asked for, so it may have run"
                + " out; it was given back", name, index, null);
    }

    /**
     * A place in a fair lock's queue was taken, but its answer did not come back within the {@code lease}
     * it asked for, so the entry may have run out already; it was given back (deleted if still there).
     */
    static LeaseLostException joinedTooLate(String name, long index, Duration lease) {
        return new LeaseLostException("the place in the queue of '" + name + "' at index " + index + " is lost: joining"
                + " was not answered within the " + lease.toMillis() + " ms lease it asked for, so it may have run out;"
                + " it was given back", name, index, null);
    }

    /**
     * A waiter's place in a fair lock's or semaphore's queue is gone before its turn came: its entry ran
     * out (at cluster time) or was removed. {@code head} is the first entry of the queue as last seen, if known.
     */
    static LeaseLostException placeLost(String name, long index, LockHolder head) {
        return new LeaseLostException("the place in the queue of '" + name + "' at index " + index + " is lost: its"
                + " entry ran out (at cluster time) or was removed before its turn came"
                + (head == null ? "" : "; the queue is headed by '" + head.owner() + "' at place " + head.fencingToken()),
                name, index, head);
    }

    /** The lock's name. */
    public String name() {
        return name;
    }

    /** The index the lease was presented at. */
    public long index() {
        return index;
    }

    /** Who holds the lock now; empty when nobody does. */
    public Optional<LockHolder> holder() {
        return Optional.ofNullable(holder);
    }

    private static String describe(String name, long index, LockHolder holder) {
        String head = "the lease on lock '" + name + "' at index " + index + " is lost: ";
        if (holder == null) {
            return head + "the lock is free (released, or expired and swept)";
        }
        if (holder.index() == index) {
            return head + "it ran out at " + holder.expiresAt().map(Object::toString).orElse("?") + " (cluster time)";
        }
        return head + "the lock is at index " + holder.index() + ", held by '" + holder.owner() + "' with token "
                + holder.fencingToken();
    }
}
