package io.ratchet.node.http;

import static io.ratchet.node.ReferencePage.cell;
import static io.ratchet.node.ReferencePage.code;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code docs/reference/http.md}, generated from the node's {@code openapi.json} (the document {@code GET
 * /v1/openapi.json} serves): every path and method with its summary, parameters, request body and
 * responses, then every schema with its fields, nested ones flattened ({@code nodes[].role}). Paths,
 * methods, fields and statuses keep the document's order, which is deliberate; nothing is sorted.
 *
 * <p>Why generate it: the OpenAPI document is what the routes are checked against, but it is JSON for
 * machines. This page is the same document for a reader, so the two cannot disagree.
 */
final class HttpReference {
    private static final String SCHEMAS = "#/components/schemas/";
    private static final String HEADERS = "#/components/headers/";

    private final JsonNode api;
    private final StringBuilder out = new StringBuilder();

    private HttpReference(JsonNode api) {
        this.api = api;
    }

    /** The page for the OpenAPI document {@code api}. */
    static String page(JsonNode api) {
        return new HttpReference(api).render();
    }

    private String render() {
        JsonNode info = api.path("info");
        line("# HTTP API reference");
        line("");
        line("Generated from `node/src/main/resources/io/ratchet/node/http/openapi.json`, the OpenAPI "
                + api.path("openapi").asText() + " document every node serves at `GET /v1/openapi.json`, by "
                + "`HttpReferenceTest`: do not edit it by hand. The guide, with examples, is [HTTP.md](../HTTP.md).");
        line("");
        line("**" + info.path("title").asText() + "**, version " + info.path("version").asText() + ". "
                + info.path("description").asText());
        line("");
        line("| Method | Path | Summary |");
        line("|---|---|---|");
        api.path("paths").fields().forEachRemaining(path -> path.getValue().fields().forEachRemaining(op ->
                line("| " + method(op.getKey()) + " | [" + code(path.getKey()) + "](#" + anchor(method(op.getKey()) + " "
                        + path.getKey()) + ") | " + cell(op.getValue().path("summary").asText()) + " |")));
        api.path("paths").fields().forEachRemaining(path -> path.getValue().fields().forEachRemaining(op ->
                operation(method(op.getKey()), path.getKey(), op.getValue())));
        line("");
        line("## Headers");
        line("");
        line("| Header | Type | Description |");
        line("|---|---|---|");
        api.path("components").path("headers").fields().forEachRemaining(h -> line("| " + code(h.getKey()) + " | "
                + type(h.getValue().path("schema")) + " | " + cell(h.getValue().path("description").asText()) + " |"));
        line("");
        line("## Schemas");
        api.path("components").path("schemas").fields().forEachRemaining(s -> schema(s.getKey(), s.getValue()));
        return out.toString();
    }

    private void operation(String method, String path, JsonNode op) {
        line("");
        line("## " + method + " " + path);
        line("");
        line(op.path("summary").asText() + (op.path("summary").asText().endsWith(".") ? "" : "."));
        if (op.has("description")) {
            line("");
            line(op.path("description").asText());
        }
        if (op.path("parameters").size() > 0) {
            line("");
            line("| Parameter | In | Type | Required | Description |");
            line("|---|---|---|---|---|");
            for (JsonNode p : op.path("parameters")) {
                line("| " + code(p.path("name").asText()) + " | " + p.path("in").asText() + " | " + type(p.path("schema"))
                        + " | " + (p.path("required").asBoolean() ? "yes" : "no") + " | " + cell(p.path("description").asText()) + " |");
            }
        }
        JsonNode body = op.path("requestBody");
        if (!body.isMissingNode()) {
            line("");
            List<String> parts = new ArrayList<>();
            body.path("content").fields().forEachRemaining(c -> parts.add(code(c.getKey()) + ", " + type(c.getValue().path("schema"))));
            line("Request body (" + (body.path("required").asBoolean() ? "required" : "optional") + "): "
                    + String.join("; ", parts) + (body.has("description") ? ". " + cell(body.path("description").asText()) : ""));
        }
        line("");
        line("| Status | Description | Body | Headers |");
        line("|---|---|---|---|");
        op.path("responses").fields().forEachRemaining(r -> {
            List<String> bodies = new ArrayList<>();
            r.getValue().path("content").fields().forEachRemaining(c -> bodies.add(
                    (c.getKey().equals("application/json") ? "" : code(c.getKey()) + " ") + type(c.getValue().path("schema"))));
            List<String> headers = new ArrayList<>();
            r.getValue().path("headers").fields().forEachRemaining(h -> headers.add(code(h.getKey())));
            line("| " + r.getKey() + " | " + cell(r.getValue().path("description").asText()) + " | " + String.join(", ", bodies)
                    + " | " + String.join(", ", headers) + " |");
        });
    }

    private void schema(String name, JsonNode schema) {
        line("");
        line("### " + name);
        line("");
        List<String> bases = new ArrayList<>();
        List<String[]> rows = new ArrayList<>();
        if (schema.has("allOf")) {
            for (JsonNode part : schema.path("allOf")) {
                if (part.has("$ref")) {
                    bases.add(type(part));
                } else {
                    fields(part, "", rows);
                }
            }
        } else {
            fields(schema, "", rows);
        }
        if (schema.has("description")) {
            line(schema.path("description").asText());
            line("");
        }
        if (!bases.isEmpty()) {
            line("The fields of " + String.join(" and ", bases) + (rows.isEmpty() ? "." : ", and:"));
            line("");
        }
        if (rows.isEmpty() && bases.isEmpty()) {
            line(type(schema) + ".");
            return;
        }
        if (!rows.isEmpty()) {
            line("| Field | Type | Required | Description |");
            line("|---|---|---|---|");
            rows.forEach(r -> line("| " + String.join(" | ", r) + " |"));
        }
    }

    /** One row per property of {@code object}, and of the objects inside it, named by their path. */
    private void fields(JsonNode object, String prefix, List<String[]> rows) {
        List<String> required = new ArrayList<>();
        object.path("required").forEach(r -> required.add(r.asText()));
        object.path("properties").fields().forEachRemaining(p -> {
            String name = prefix + p.getKey();
            JsonNode s = p.getValue();
            rows.add(new String[] {code(name), type(s), required.contains(p.getKey()) ? "yes" : "", cell(s.path("description").asText())});
            if (s.has("properties")) {
                fields(s, name + ".", rows);
            } else if (s.path("items").has("properties")) {
                fields(s.path("items"), name + "[].", rows);
            }
        });
    }

    /** A schema's type in a few words, with its format, values, bounds and nullability; references linked. */
    private String type(JsonNode s) {
        if (s.has("$ref")) {
            String ref = s.path("$ref").asText();
            String name = ref.startsWith(SCHEMAS) ? ref.substring(SCHEMAS.length())
                    : ref.startsWith(HEADERS) ? ref.substring(HEADERS.length()) : ref;
            return "[" + name + "](#" + anchor(name) + ")";
        }
        String t;
        if (s.has("allOf")) {
            List<String> parts = new ArrayList<>();
            s.path("allOf").forEach(p -> parts.add(type(p)));
            t = String.join(" and ", parts);
        } else if (s.has("items")) {
            t = "array of " + type(s.path("items"));
        } else if (s.has("additionalProperties")) {
            t = "object of string to " + type(s.path("additionalProperties"));
        } else if (s.has("type")) {
            t = s.path("type").asText();
        } else {
            t = "any JSON";
        }
        if (s.has("format")) {
            t += " (" + s.path("format").asText() + ")";
        }
        List<String> also = new ArrayList<>();
        if (s.has("enum")) {
            List<String> values = new ArrayList<>();
            s.path("enum").forEach(v -> values.add(code(v.asText())));
            also.add("one of " + String.join(", ", values));
        }
        for (Map.Entry<String, String> bound : List.of(Map.entry("minimum", "at least "), Map.entry("maximum", "at most "),
                Map.entry("minItems", "at least "), Map.entry("maxItems", "at most "))) {
            if (s.has(bound.getKey())) {
                also.add(bound.getValue() + s.path(bound.getKey()).asText() + (bound.getKey().endsWith("Items") ? " items" : ""));
            }
        }
        if (s.has("pattern")) {
            also.add("matching " + code(s.path("pattern").asText()));
        }
        if (s.has("example")) {
            also.add("e.g. " + code(s.path("example").asText()));
        }
        if (s.path("nullable").asBoolean()) {
            also.add("or null");
        }
        return also.isEmpty() ? t : t + ", " + String.join(", ", also);
    }

    private static String method(String name) {
        return name.toUpperCase(Locale.ROOT);
    }

    /** GitHub's anchor for a heading: lower case, spaces to hyphens, other punctuation dropped. */
    static String anchor(String heading) {
        return heading.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-');
    }

    private void line(String text) {
        out.append(text).append('\n');
    }
}
