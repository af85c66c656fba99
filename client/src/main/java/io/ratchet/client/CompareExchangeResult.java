package io.ratchet.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;

/**
 * The outcome of a conditional put or delete, as in RavenDB: a failed condition is a normal result.
 * When {@code successful}, {@code item} is the state the write left (null after a delete); when not,
 * the item's current state (null when absent), so a retry loop can recompute from it without
 * another read.
 */
public record CompareExchangeResult(boolean successful, String key, Item item) {

    /** After a success, the item's new index (0 after a delete); after a failure, its current index (0 when absent). */
    public long index() {
        return item == null ? 0 : item.index();
    }

    /** Compact JSON text of the value, or null when there is no item. */
    public String value() {
        return item == null ? null : item.value();
    }

    /** Compact JSON text of the metadata, or null. */
    public String metadata() {
        return item == null ? null : item.metadata();
    }

    /** The index at which the item was created: for a lock, the holder's fencing token. 0 when absent. */
    public long createdIndex() {
        return item == null ? 0 : item.createdIndex();
    }

    /** Cluster time (epoch milliseconds) at which the item expires; 0 for never or absent. */
    public long expiresAt() {
        return item == null ? 0 : item.expiresAt();
    }

    /** The value as a JSON tree, or null. */
    public JsonNode valueNode() {
        return item == null ? null : item.valueNode();
    }

    /** The value bound to {@code type} with Jackson, or null. */
    public <T> T valueAs(Class<T> type) {
        return item == null ? null : Json.MAPPER.convertValue(item.valueNode(), type);
    }
}
