package io.ratchet.protocol;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A named item as stored: the key as first written, its value and metadata as compact JSON text, and
 * its index, the Raft log index of the entry that created or last changed it.
 */
public record Item(String key, String value, long index, String metadata) {

    /** The value as a JSON tree. */
    public JsonNode valueNode() {
        return Json.parse(value);
    }

    /** The metadata as a JSON tree, or null when the item has none. */
    public JsonNode metadataNode() {
        return metadata == null ? null : Json.parse(metadata);
    }
}
