package io.ratchet.client;

import io.ratchet.common.Credentials;
import io.ratchet.protocol.Command;
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
 * @param maxAttempts      attempts per operation that reach a node and get no answer; refusals (not the
 *                         leader, no leader yet) and refused connections are bounded by the timeout alone
 * @param operationTimeout the most one operation may take in all, retries included
 * @param sessionTimeout   how long the cluster keeps this client's session (what makes a resent write
 *                         apply once) without a write in it; an idle client opens a new one when it next writes
 * @param credentials      TLS trust, the client's certificate and its token ({@link Credentials#NONE}: plaintext)
 */
public record ClientOptions(Map<String, String> peers, String group, Duration requestTimeout, int maxAttempts,
                            Duration operationTimeout, Duration sessionTimeout, Credentials credentials) {
    /** The default session timeout: far above any retry of one write, short enough not to hoard sessions. */
    public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofMinutes(5);

    public ClientOptions {
        peers = Map.copyOf(peers);
        credentials = credentials == null ? Credentials.NONE : credentials;
        if (peers.isEmpty()) {
            throw new IllegalArgumentException("at least one peer address is needed");
        }
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1");
        }
        if (sessionTimeout.toMillis() < Command.OpenSession.MIN_TIMEOUT_MILLIS
                || sessionTimeout.toMillis() > Command.OpenSession.MAX_TIMEOUT_MILLIS) {
            throw new IllegalArgumentException("session timeout must be 1 s .. 1 h, not " + sessionTimeout);
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
        return new ClientOptions(map, "ratchet", Duration.ofSeconds(3), 12, Duration.ofSeconds(15),
                DEFAULT_SESSION_TIMEOUT, Credentials.NONE);
    }

    public ClientOptions withGroup(String group) {
        return new ClientOptions(peers, group, requestTimeout, maxAttempts, operationTimeout, sessionTimeout, credentials);
    }

    public ClientOptions withTimeouts(Duration requestTimeout, int maxAttempts, Duration operationTimeout) {
        return new ClientOptions(peers, group, requestTimeout, maxAttempts, operationTimeout, sessionTimeout, credentials);
    }

    public ClientOptions withSessionTimeout(Duration sessionTimeout) {
        return new ClientOptions(peers, group, requestTimeout, maxAttempts, operationTimeout, sessionTimeout, credentials);
    }

    public ClientOptions withCredentials(Credentials credentials) {
        return new ClientOptions(peers, group, requestTimeout, maxAttempts, operationTimeout, sessionTimeout, credentials);
    }
}
