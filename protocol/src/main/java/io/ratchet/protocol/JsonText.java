package io.ratchet.protocol;

import com.fasterxml.jackson.annotation.JsonRawValue;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * JSON text given as such. Values are passed to the client as objects that Jackson writes (a string is
 * written as a JSON string); a caller that holds JSON text already wraps it in this, so that text is
 * never silently taken for either. Checked when made: one JSON value, nothing after it.
 */
public record JsonText(String json) {
    public JsonText {
        Json.validateJson("JSON text", json);
    }

    public static JsonText of(String json) {
        return new JsonText(json);
    }

    /** Written into the surrounding JSON as it is. */
    @JsonValue
    @JsonRawValue
    @Override
    public String json() {
        return json;
    }
}
