package io.ratchet.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.DateTimeException;
import java.time.Instant;

/**
 * When an item expires, and whether it has. The {@code @expires} metadata field is an ISO-8601 UTC
 * instant at which an item expires, judged on cluster time. Parsing and formatting are pure, so every
 * replica derives the same expiry.
 *
 * <p>{@link #expired} is the one rule for whether an expiry has passed: the state machine applies it to
 * conditions and sweeps, the sweeper to what it proposes, the recipes and metrics to what they show. A
 * reader that judged the boundary differently would see a lease as held that the cluster has let go.
 */
public final class Expiry {
    public static final String FIELD = "@expires";
    /** The longest time-to-live a write may ask for. */
    public static final long MAX_TTL_MILLIS = 366L * 24 * 3600 * 1000;

    private Expiry() {
    }

    /**
     * Whether an item that expires at {@code expiresAt} has expired at {@code clusterTime}: it has once
     * cluster time reaches its expiry (inclusive), and never when {@code expiresAt} is 0.
     */
    public static boolean expired(long expiresAt, long clusterTime) {
        return expiresAt != 0 && expiresAt <= clusterTime;
    }

    /** The expiry named in metadata, in epoch milliseconds, or 0 when it names none. */
    public static long fromMetadata(String metadata) {
        if (metadata == null || !metadata.contains(FIELD)) {
            return 0;
        }
        JsonNode expires = Json.parse(metadata).get(FIELD);
        if (expires == null) {
            return 0;
        }
        if (!expires.isTextual()) {
            throw new InvalidCommandException(FIELD + " must be an ISO-8601 instant string such as 2030-01-01T00:00:00Z");
        }
        try {
            long millis = Instant.parse(expires.asText()).toEpochMilli();
            if (millis <= 0) {
                throw new InvalidCommandException(FIELD + " must be after 1970-01-01T00:00:00Z");
            }
            return millis;
        } catch (DateTimeException | ArithmeticException e) {
            throw new InvalidCommandException(FIELD + " '" + expires.asText() + "' is not an ISO-8601 instant such as 2030-01-01T00:00:00Z");
        }
    }

    /** Metadata with {@code @expires} set to {@code expiresAt}, other fields kept. */
    public static String withExpiry(String metadata, long expiresAt) {
        ObjectNode node = metadata == null ? Json.MAPPER.createObjectNode() : (ObjectNode) Json.parse(metadata);
        node.put(FIELD, format(expiresAt));
        return Json.write(node);
    }

    public static String format(long epochMillis) {
        return Instant.ofEpochMilli(epochMillis).toString();
    }
}
