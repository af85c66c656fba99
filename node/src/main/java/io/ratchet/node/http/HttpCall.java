package io.ratchet.node.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.common.Durations;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Json;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * One request as a route sees it: the rest of the path after the route's prefix (percent-decoded), the
 * query parameters, the headers it asked for and the body. Every accessor that parses refuses bad input
 * with an {@link HttpError} naming the parameter or header.
 */
record HttpCall(String method, String rest, Map<String, String> query, HeaderLookup headers, byte[] body) {

    /** Header lookup, case-insensitive; null when absent. */
    interface HeaderLookup {
        String get(String name);
    }

    String param(String name) {
        String value = query.get(name);
        return value == null || value.isEmpty() ? null : value;
    }

    long longParam(String name, long fallback, long min, long max) {
        String value = param(name);
        if (value == null) {
            return fallback;
        }
        try {
            long n = Long.parseLong(value);
            if (n < min || n > max) {
                throw HttpError.badRequest("parameter '" + name + "' must be " + min + ".." + max + ", not " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw HttpError.badRequest("parameter '" + name + "' must be a whole number, not '" + value + "'");
        }
    }

    Duration durationParam(String name, Duration fallback) {
        String value = param(name);
        return value == null ? fallback : duration(name, value);
    }

    static Duration duration(String what, String text) {
        try {
            return Durations.parse(text);
        } catch (IllegalArgumentException e) {
            throw HttpError.badRequest(what + ": " + e.getMessage());
        }
    }

    boolean flag(String name) {
        String value = param(name);
        if (value == null || value.equals("false")) {
            return false;
        }
        if (value.equals("true")) {
            return true;
        }
        throw HttpError.badRequest("parameter '" + name + "' must be true or false, not '" + value + "'");
    }

    String header(String name) {
        String value = headers.get(name);
        return value == null || value.isBlank() ? null : value.trim();
    }

    /** The body as one JSON value (not null); an empty body, bad JSON or text after the value is refused. */
    JsonNode json() {
        if (body.length == 0) {
            throw HttpError.badRequest("the body is empty; send JSON");
        }
        String text = bodyText();
        try {
            Json.validateValue(text);
        } catch (InvalidCommandException e) {
            throw HttpError.badRequest("body: " + e.getMessage());
        }
        return Json.parse(text);
    }

    /** The body as a JSON object; anything else is refused. */
    JsonNode jsonObject() {
        JsonNode node = json();
        if (!node.isObject()) {
            throw HttpError.badRequest("the body must be a JSON object");
        }
        return node;
    }

    String bodyText() {
        return new String(body, StandardCharsets.UTF_8);
    }
}
