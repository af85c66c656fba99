package io.ratchet.client.lock;

import io.ratchet.client.RatchetException;
import java.util.Optional;

/**
 * A renew or release found that the lease is no longer held: it ran out (at cluster time), was
 * released, or another owner took the lock over. Nothing was written. Retrying the same call cannot
 * succeed; the caller must stop acting under this lease (its fencing token is outdated or about to be)
 * and acquire anew.
 */
public final class LeaseLostException extends RatchetException {
    private final String name;
    private final long index;
    private final transient LockHolder holder;

    public LeaseLostException(String name, long index, LockHolder holder) {
        super(describe(name, index, holder), null);
        this.name = name;
        this.index = index;
        this.holder = holder;
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
