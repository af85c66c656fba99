package io.ratchet.client;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How a client reaches the cluster and how long it tries. Every bound is finite: the client never
 * retries forever.
 *
 * @param peers            node addresses, keyed by node id where known
 * @param group            the cluster's name
 * @param requestTimeout   how long one attempt at one node may take
 * @param maxAttempts      attempts per operation (leader discovery and fail-over each use some)
 * @param operationTimeout the most one operation may take in all, retries included
 */
public record ClientOptions(Map<String, String> peers, String group, Duration requestTimeout, int maxAttempts,
                            Duration operationTimeout) {

    public ClientOptions {
        peers = Map.copyOf(peers);
        if (peers.isEmpty()) {
            throw new IllegalArgumentException("at least one peer address is needed");
        }
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1");
        }
    }

    /**
     * Parses {@code host:port,host:port} or {@code id=host:port,...}. A peer without an id gets one
     * made from its address; the client learns the real ids from the first leader redirect.
     */
    public static ClientOptions parse(String peers) {
        Map<String, String> map = new LinkedHashMap<>();
        for (String part : peers.split(",")) {
            String s = part.trim();
            if (s.isEmpty()) {
                continue;
            }
            int eq = s.indexOf('=');
            String address = eq < 0 ? s : s.substring(eq + 1).trim();
            int colon = address.lastIndexOf(':');
            if (colon <= 0 || colon == address.length() - 1 || !address.substring(colon + 1).chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException("peer '" + s + "' is not host:port or id=host:port");
            }
            String id = eq < 0 ? address.replace(':', '_') : s.substring(0, eq).trim();
            map.put(id, address);
        }
        return new ClientOptions(map, "ratchet", Duration.ofSeconds(3), 12, Duration.ofSeconds(15));
    }

    public ClientOptions withGroup(String group) {
        return new ClientOptions(peers, group, requestTimeout, maxAttempts, operationTimeout);
    }

    public ClientOptions withTimeouts(Duration requestTimeout, int maxAttempts, Duration operationTimeout) {
        return new ClientOptions(peers, group, requestTimeout, maxAttempts, operationTimeout);
    }
}
