package io.ratchet.node.security;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Says whether a kind of refusal of a remote address is the first in a while: each is logged once per
 * address and kind every ten minutes, so a client that retries a refused connection in a loop (or a
 * scanner) cannot fill the log, and an operator still sees every address that tried, and why. Keyed by
 * host, not port: each new connection comes from a new port.
 */
final class OncePerAddress {
    private static final long PERIOD_NANOS = Duration.ofMinutes(10).toNanos();
    /** Bounds the memory a flood of addresses can take; forgetting them all only logs them again. */
    private static final int MAX_ADDRESSES = 10_000;

    private final Map<String, Long> last = new ConcurrentHashMap<>();

    /** The host of {@code remote}, as a log line names it. */
    static String host(SocketAddress remote) {
        if (remote instanceof InetSocketAddress inet) {
            return inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
        }
        return String.valueOf(remote);
    }

    /**
     * True when no refusal of {@code kind} was logged for {@code remote}'s host within the period; then
     * this one counts as logged now.
     */
    boolean first(SocketAddress remote, String kind) {
        String key = host(remote) + " " + kind;
        long now = System.nanoTime();
        Long before = last.get(key);
        if (before != null && now - before < PERIOD_NANOS) {
            return false;
        }
        if (last.size() >= MAX_ADDRESSES) {
            last.clear();
        }
        return before == null ? last.putIfAbsent(key, now) == null : last.replace(key, before, now);
    }
}
