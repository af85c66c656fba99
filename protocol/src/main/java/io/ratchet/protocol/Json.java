package io.ratchet.protocol;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Values and metadata travel and rest as compact JSON text. This class checks such text without
 * building a tree (a streaming pass), and converts between text and trees at the API edge.
 */
public final class Json {
    public static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonFactory FACTORY = MAPPER.getFactory();

    private Json() {
    }

    /** Checks a value: one JSON value, not null, within the size limit. Returns it unchanged. */
    public static String validateValue(String json) {
        if (json == null) {
            throw new InvalidCommandException("value must not be null");
        }
        checkSize("value", json);
        JsonToken first = checkSingleValue("value", json);
        if (first == JsonToken.VALUE_NULL) {
            throw new InvalidCommandException("value must not be JSON null");
        }
        return json;
    }

    /** Checks that {@code json} is one JSON value (null included) within the size limit; {@code what} names it in errors. */
    public static String validateJson(String what, String json) {
        if (json == null) {
            throw new InvalidCommandException(what + " must not be null");
        }
        checkSize(what, json);
        checkSingleValue(what, json);
        return json;
    }

    /** Checks metadata: absent (null) or one JSON object within the size limit. */
    public static String validateMetadata(String json) {
        if (json == null) {
            return null;
        }
        checkSize("metadata", json);
        if (checkSingleValue("metadata", json) != JsonToken.START_OBJECT) {
            throw new InvalidCommandException("metadata must be a JSON object");
        }
        return json;
    }

    public static JsonNode parse(String json) {
        try {
            return MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new InvalidCommandException("not valid JSON: " + e.getOriginalMessage());
        }
    }

    /** An object as compact JSON, as Jackson writes it; {@link JsonText} is taken as it is. */
    public static String write(Object node) {
        if (node instanceof JsonText text) {
            return text.json();
        }
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new InvalidCommandException("cannot encode as JSON: " + e.getOriginalMessage());
        }
    }

    private static void checkSize(String what, String json) {
        // A char is at most 3 UTF-8 bytes; count exactly only when that bound could be exceeded.
        if ((long) json.length() * 3 > Limits.MAX_VALUE_BYTES) {
            int bytes = json.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > Limits.MAX_VALUE_BYTES) {
                throw new InvalidCommandException(what + " is " + bytes + " bytes of JSON; the limit is "
                        + Limits.MAX_VALUE_BYTES);
            }
        }
    }

    private static JsonToken checkSingleValue(String what, String json) {
        try (JsonParser parser = FACTORY.createParser(json)) {
            JsonToken first = parser.nextToken();
            if (first == null) {
                throw new InvalidCommandException(what + " is empty; it must be JSON");
            }
            parser.skipChildren();
            if (parser.nextToken() != null) {
                throw new InvalidCommandException(what + " has text after its JSON value");
            }
            return first;
        } catch (IOException e) {
            String detail = e instanceof JsonProcessingException p ? p.getOriginalMessage() : e.getMessage();
            throw new InvalidCommandException(what + " is not valid JSON: " + detail);
        }
    }
}
