package io.ratchet.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.POJONode;
import com.fasterxml.jackson.databind.util.RawValue;
import io.ratchet.protocol.Item;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Set;

/** Prints a command's result: one JSON object, or the same fields as readable lines. */
final class Output {
    private Output() {
    }

    /**
     * Output is written with Jackson's streaming generator, not an ObjectMapper: a command line is a
     * short-lived process, and a mapper's serializer machinery costs more to start than printing takes.
     */
    private static final JsonFactory FACTORY = new JsonFactory();

    static ObjectNode object() {
        return JsonNodeFactory.instance.objectNode();
    }

    /** Stored JSON text as it is (the cluster has checked it is one JSON value), or JSON null for absent text. */
    static JsonNode json(String text) {
        return text == null ? NullNode.getInstance() : JsonNodeFactory.instance.rawValueNode(new RawValue(text));
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
            out.println(write(result));
        } else {
            result.fields().forEachRemaining(e -> out.println(e.getKey() + ": "
                    + (JSON_FIELDS.contains(e.getKey()) ? write(e.getValue()) : text(e.getValue()))));
        }
        out.flush();
    }

    /**
     * Fields that hold stored JSON: printed as JSON in text output too, so "10" (a string) and 10 (a
     * number) read differently, as they are.
     */
    private static final Set<String> JSON_FIELDS = Set.of("value", "metadata", "document");

    private static String text(JsonNode node) {
        return node.isTextual() ? node.asText() : write(node);
    }

    /** A tree as compact JSON text; stored values inside it are written as the cluster holds them. */
    static String write(JsonNode node) {
        StringWriter text = new StringWriter();
        try (JsonGenerator g = FACTORY.createGenerator(text)) {
            write(g, node);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return text.toString();
    }

    private static void write(JsonGenerator g, JsonNode node) throws IOException {
        switch (node.getNodeType()) {
            case OBJECT -> {
                g.writeStartObject();
                for (Map.Entry<String, JsonNode> field : node.properties()) {
                    g.writeFieldName(field.getKey());
                    write(g, field.getValue());
                }
                g.writeEndObject();
            }
            case ARRAY -> {
                g.writeStartArray();
                for (JsonNode element : node) {
                    write(g, element);
                }
                g.writeEndArray();
            }
            case POJO -> {
                Object pojo = ((POJONode) node).getPojo();
                if (!(pojo instanceof RawValue raw)) {
                    throw new IllegalArgumentException("cannot print " + pojo.getClass().getName());
                }
                g.writeRawValue(raw.rawValue().toString());
            }
            case STRING -> g.writeString(node.textValue());
            case NUMBER -> {
                if (node.isIntegralNumber() && node.canConvertToLong()) {
                    g.writeNumber(node.longValue());
                } else if (node.isIntegralNumber()) {
                    g.writeNumber(node.bigIntegerValue());
                } else {
                    g.writeNumber(node.decimalValue());
                }
            }
            case BOOLEAN -> g.writeBoolean(node.booleanValue());
            case NULL, MISSING -> g.writeNull();
            case BINARY -> g.writeBinary(node.binaryValue());
        }
    }
}
