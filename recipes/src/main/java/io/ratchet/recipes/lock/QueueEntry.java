package io.ratchet.recipes.lock;

import java.time.Instant;
import java.util.Optional;

/**
 * One entry of a fair lock's or a semaphore's queue, as a listing saw it: an observation, not a grant.
 *
 * @param name         the lock's or semaphore's name
 * @param owner        the owner id the entry carries
 * @param key          the entry's item
 * @param place        where it joined the queue: the index that created it (ties are ordered by key)
 * @param fencingToken the token of its turn, once it has had it; 0 while it waits
 * @param index        the entry's index at the time of the listing
 * @param expiresAt    when its lease ends, in cluster time
 */
public record QueueEntry(String name, String owner, String key, long place, long fencingToken, long index,
                         Optional<Instant> expiresAt) {

    /** Whether it has had its turn (it holds the lock, or a permit). */
    public boolean holding() {
        return fencingToken > 0;
    }

    /** As a {@link LockHolder}. */
    public LockHolder holder() {
        return new LockHolder(name, owner, fencingToken, index, expiresAt);
    }
}
