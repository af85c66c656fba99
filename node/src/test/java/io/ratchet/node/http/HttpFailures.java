package io.ratchet.node.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.protocol.Json;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** The HTTP API's answer to a failure, without a server: for tests that compare it with the command line's. */
public final class HttpFailures {
    private HttpFailures() {
    }

    /** What the API answers when a request fails with {@code failure}. */
    public static Answer answer(Throwable failure) {
        HttpReply reply = HttpApi.failure(failure);
        return new Answer(reply.status(), Map.copyOf(reply.headers()),
                Json.parse(new String(reply.body(), StandardCharsets.UTF_8)));
    }

    public record Answer(int status, Map<String, String> headers, JsonNode body) {
    }
}
