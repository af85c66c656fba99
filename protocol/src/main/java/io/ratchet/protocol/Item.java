package io.ratchet.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.Optional;

/**
 * A named item as stored.
 *
 * @param key          the key as first written (keys compare case-insensitively)
 * @param value        compact JSON text
 * @param index        the Raft log index of the entry that created or last changed the item
 * @param createdIndex the index of the entry that created it (absent, or expired, before): constant
 *                     across updates, so for a lock item it is the holder's fencing token
 * @param expiresAt    cluster time (epoch milliseconds) at which the item expires, 0 for never
 * @param metadata     compact JSON object text, or null; {@code @expires} mirrors {@code expiresAt}
 */
public record Item(String key, String value, long index, long createdIndex, long expiresAt, String metadata) {

    /** Whether the item has expired at {@code clusterTime}, by {@link Expiry#expired}. */
    public boolean expiredAt(long clusterTime) {
        return Expiry.expired(expiresAt, clusterTime);
    }

    /** When the item expires, in cluster time; empty when it never does. */
    public Optional<Instant> expiry() {
        return expiresAt == 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(expiresAt));
    }

    /** The value as a JSON tree. */
    public JsonNode valueNode() {
        return Json.parse(value);
    }

    /** The metadata as a JSON tree, or null when the item has none. */
    public JsonNode metadataNode() {
        return metadata == null ? null : Json.parse(metadata);
    }
}
