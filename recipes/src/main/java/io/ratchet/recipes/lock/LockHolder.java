package io.ratchet.recipes.lock;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.protocol.Item;
import java.time.Instant;
import java.util.Optional;

/**
 * Who holds a lock, as the cluster reported it at one moment: an observation, not a grant. It may
 * have been renewed, released or taken over since.
 *
 * @param name         the lock's name
 * @param owner        the holder's owner id (the lock item's raw value when it is not a lock value)
 * @param fencingToken the index of the entry that granted the holder its lock
 * @param index        the lock item's index at the time of the observation
 * @param expiresAt    when the holder's lease ends, in cluster time; empty for an item that never expires
 */
public record LockHolder(String name, String owner, long fencingToken, long index, Optional<Instant> expiresAt) {

    /** The holder that lock item {@code item} of lock {@code name} names. */
    public static LockHolder of(String name, Item item) {
        return new LockHolder(name, ownerOf(item), item.createdIndex(), item.index(), item.expiry());
    }

    /** The owner a lock value names; for an item that is not a lock value, its raw JSON. */
    static String ownerOf(Item item) {
        JsonNode owner = item.valueNode().get("owner");
        return owner != null && owner.isTextual() ? owner.asText() : item.value();
    }
}
