package io.ratchet.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Reads a transaction's operations from their JSON form, the one the command line and the HTTP API
 * take: an array of
 * <pre>
 * {"op":"put","key":K,"value":V,"index":N[,"metadata":{...}]}
 * {"op":"delete","key":K,"index":N}
 * {"op":"check","key":K,"index":N}
 * {"op":"put-document","id":ID,"document":{...},"index":GUARD_INDEX}
 * {"op":"delete-document","id":ID,"index":GUARD_INDEX}
 * </pre>
 * Every field is required but metadata, and an unknown field is an error: a typo must not silently
 * turn into a different condition (a missing index would otherwise read as "create-only").
 */
public final class TransactionOps {
    private TransactionOps() {
    }

    /** @throws InvalidCommandException naming the operation and the field that is wrong */
    public static List<Command.Op> parse(String json) {
        return parse(Json.parse(json));
    }

    /** @throws InvalidCommandException naming the operation and the field that is wrong */
    public static List<Command.Op> parse(JsonNode array) {
        if (array == null || !array.isArray() || array.isEmpty()) {
            throw new InvalidCommandException("the operations must be a non-empty JSON array, e.g. "
                    + "[{\"op\":\"put\",\"key\":\"a\",\"value\":1,\"index\":0}]");
        }
        List<Command.Op> ops = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            ops.add(parse(i + 1, array.get(i)));
        }
        return ops;
    }

    private static Command.Op parse(int n, JsonNode op) {
        if (!op.isObject() || !op.path("op").isTextual()) {
            throw new InvalidCommandException("operation " + n + " must be an object with an \"op\" field");
        }
        String kind = op.get("op").asText();
        String where = "operation " + n + " (" + kind + ")";
        return switch (kind) {
            case "put" -> {
                fields(where, op, List.of("op", "key", "value", "index", "metadata"));
                JsonNode metadata = op.get("metadata");
                yield new Command.Put(text(where, op, "key"), Json.write(required(where, op, "value")), index(where, op),
                        metadata == null || metadata.isNull() ? null : Json.write(metadata));
            }
            case "delete" -> {
                fields(where, op, List.of("op", "key", "index"));
                yield new Command.Delete(text(where, op, "key"), index(where, op));
            }
            case "check" -> {
                fields(where, op, List.of("op", "key", "index"));
                yield new Command.Check(text(where, op, "key"), index(where, op));
            }
            case "put-document" -> {
                fields(where, op, List.of("op", "id", "document", "index"));
                yield new Command.PutDocument(text(where, op, "id"), Json.write(required(where, op, "document")), index(where, op));
            }
            case "delete-document" -> {
                fields(where, op, List.of("op", "id", "index"));
                yield new Command.DeleteDocument(text(where, op, "id"), index(where, op));
            }
            default -> throw new InvalidCommandException(where + ": \"op\" must be put, delete, check, put-document"
                    + " or delete-document");
        };
    }

    private static void fields(String where, JsonNode op, List<String> allowed) {
        for (Iterator<String> names = op.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!allowed.contains(name)) {
                throw new InvalidCommandException(where + ": unknown field \"" + name + "\"; it takes " + allowed);
            }
        }
    }

    private static JsonNode required(String where, JsonNode op, String field) {
        JsonNode value = op.get(field);
        if (value == null) {
            throw new InvalidCommandException(where + ": \"" + field + "\" is required");
        }
        return value;
    }

    private static String text(String where, JsonNode op, String field) {
        JsonNode value = required(where, op, field);
        if (!value.isTextual()) {
            throw new InvalidCommandException(where + ": \"" + field + "\" must be a string");
        }
        return value.asText();
    }

    private static long index(String where, JsonNode op) {
        JsonNode value = required(where, op, "index");
        if (!value.isIntegralNumber() || !value.canConvertToLong()) {
            throw new InvalidCommandException(where + ": \"index\" must be an integer (0: absent / create-only)");
        }
        return value.asLong();
    }
}
