package io.ratchet.node.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.ErrorCode;
import io.ratchet.protocol.Json;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** What a route answers: a status, headers and a body (JSON unless said otherwise). */
record HttpReply(int status, Map<String, String> headers, String contentType, byte[] body) {
    static final String JSON = "application/json";

    static HttpReply json(int status, JsonNode body) {
        return new HttpReply(status, new LinkedHashMap<>(), JSON, Json.write(body).getBytes(StandardCharsets.UTF_8));
    }

    static HttpReply empty(int status) {
        return new HttpReply(status, new LinkedHashMap<>(), null, new byte[0]);
    }

    static HttpReply error(int status, String error, ErrorCode code, String message) {
        return json(status, errorBody(error, code, message));
    }

    /**
     * {@code {"error": ERROR, "message": TEXT, "code": CODE}}: {@code error} is the HTTP API's own name for
     * the failure (docs/HTTP.md, kept as it always was), {@code code} the {@link ErrorCode}'s, the one the
     * command line reports for the same failure.
     */
    static ObjectNode errorBody(String error, ErrorCode code, String message) {
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.put("error", error);
        body.put("message", message);
        body.put("code", code.wireName());
        return body;
    }

    /** With the entity tag of an index: {@code ETag: "<index>"}. */
    HttpReply etag(long index) {
        return header("ETag", "\"" + index + "\"");
    }

    HttpReply header(String name, String value) {
        headers.put(name, value);
        return this;
    }
}
