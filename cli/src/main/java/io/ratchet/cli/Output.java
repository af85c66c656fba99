package io.ratchet.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import java.io.PrintWriter;
import java.util.Set;

/** Prints a command's result: one JSON object, or the same fields as readable lines. */
final class Output {
    private Output() {
    }

    static ObjectNode object() {
        return Json.MAPPER.createObjectNode();
    }

    /** Parsed JSON text, or JSON null for absent text. */
    static JsonNode json(String text) {
        return text == null ? Json.MAPPER.nullNode() : Json.parse(text);
    }

    static ObjectNode item(Item item) {
        ObjectNode o = object();
        o.put("key", item.key());
        o.set("value", json(item.value()));
        o.put("index", item.index());
        o.set("metadata", json(item.metadata()));
        return o;
    }

    /** The item fields for a key that has no item. */
    static ObjectNode absent(String key) {
        ObjectNode o = object();
        o.put("key", key);
        o.putNull("value");
        o.put("index", 0);
        o.putNull("metadata");
        return o;
    }

    static void print(PrintWriter out, boolean asJson, ObjectNode result) {
        if (asJson) {
            out.println(Json.write(result));
        } else {
            result.fields().forEachRemaining(e -> out.println(e.getKey() + ": "
                    + (JSON_FIELDS.contains(e.getKey()) ? Json.write(e.getValue()) : text(e.getValue()))));
        }
        out.flush();
    }

    /**
     * Fields that hold stored JSON: printed as JSON in text output too, so "10" (a string) and 10 (a
     * number) read differently, as they are.
     */
    private static final Set<String> JSON_FIELDS = Set.of("value", "metadata", "document");

    private static String text(JsonNode node) {
        return node.isTextual() ? node.asText() : Json.write(node);
    }
}
