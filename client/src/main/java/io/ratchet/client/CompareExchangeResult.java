package io.ratchet.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Result;

/**
 * The outcome of a conditional put or delete, as in RavenDB: a failed condition is a normal result.
 * When {@code successful}, a put's {@code index} is the item's new index and {@code value} what was
 * stored; a delete's index is 0 and value null. When not, {@code index} and {@code value} are the
 * item's current ones (0 and null when it is absent), so a retry loop can recompute from them
 * without another read.
 *
 * @param value    compact JSON text, or null
 * @param metadata compact JSON object text, or null
 */
public record CompareExchangeResult(boolean successful, String key, long index, String value, String metadata) {

    static CompareExchangeResult of(Result.Write w) {
        return new CompareExchangeResult(w.successful(), w.key(), w.index(), w.value(), w.metadata());
    }

    /** The value as a JSON tree, or null. */
    public JsonNode valueNode() {
        return value == null ? null : Json.parse(value);
    }

    /** The value bound to {@code type} with Jackson, or null. */
    public <T> T valueAs(Class<T> type) {
        return value == null ? null : Json.MAPPER.convertValue(valueNode(), type);
    }
}
