package io.ratchet.recipes.lock;

import io.ratchet.protocol.Item;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A cluster time that has certainly been reached: the greatest stamp of this instance's own writes with
 * a time-to-live ({@code expiresAt - ttl} of the item each left). Cluster time never goes back, so an entry
 * whose expiry is at or before it has certainly run out, and counts as gone before the sweeper deletes it.
 */
final class SeenClusterTime {
    private final AtomicLong seen = new AtomicLong();

    /** Whether {@code entry} has certainly run out by a cluster time this instance has seen. */
    boolean expired(Item entry) {
        return entry.expiredAt(seen.get());
    }

    /** Notes the cluster time {@code item} was written at, if a write of ours with {@code ttlMillis} left it. */
    void learn(Item item, long ttlMillis) {
        if (item != null && item.expiresAt() != 0) {
            long stamped = item.expiresAt() - ttlMillis;
            seen.accumulateAndGet(stamped, Math::max);
        }
    }
}
