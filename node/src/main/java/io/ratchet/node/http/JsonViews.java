package io.ratchet.node.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.LockHolder;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;

/** The JSON forms the HTTP API answers with (docs/HTTP.md). */
final class JsonViews {
    private JsonViews() {
    }

    /** {@code {key, value, index, createdIndex, expiresAt, metadata}}; expiresAt in epoch ms or null. */
    static ObjectNode item(Item item) {
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("key", item.key());
        node.set("value", item.valueNode());
        node.put("index", item.index());
        node.put("createdIndex", item.createdIndex());
        expiresAt(node, item.expiresAt());
        node.set("metadata", item.metadata() == null ? null : item.metadataNode());
        return node;
    }

    static ObjectNode document(Document document) {
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("id", document.id());
        node.set("document", document.node());
        node.put("index", document.index());
        return node;
    }

    static ObjectNode lease(Lease lease) {
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("name", lease.name());
        node.put("owner", lease.owner());
        node.put("fencingToken", lease.fencingToken());
        node.put("index", lease.currentIndex());
        node.put("expiresAt", lease.expiresAt().toEpochMilli());
        return node;
    }

    static ObjectNode holder(LockHolder holder) {
        ObjectNode node = Json.MAPPER.createObjectNode();
        node.put("name", holder.name());
        node.put("owner", holder.owner());
        node.put("fencingToken", holder.fencingToken());
        node.put("index", holder.index());
        expiresAt(node, holder.expiresAt().map(i -> i.toEpochMilli()).orElse(0L));
        return node;
    }

    /** A lock item read by listing, as its holder. */
    static ObjectNode holder(Item item) {
        return holder(LockHolder.of(item.key().substring(Locks.PREFIX.length()), item));
    }

    private static void expiresAt(ObjectNode node, long expiresAt) {
        if (expiresAt == 0) {
            node.putNull("expiresAt");
        } else {
            node.put("expiresAt", expiresAt);
        }
    }
}
