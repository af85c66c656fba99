package io.ratchet.node;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for test servers, each handed out at most once per JVM.
 *
 * <p>A port is probed by binding it and closing the socket again, so a probe alone cannot tell that the
 * same port was handed out a moment ago for a server that has not bound yet: a cluster's six ports are
 * all chosen before its first node starts, and a repeat made one node fail to bind (a CI run failed so).
 * Ports come from below the kernel's ephemeral range (32768 and up on Linux): a port from that range
 * (what {@code new ServerSocket(0)} gives) can be taken by some outgoing connection while its node is
 * stopped, and then the node cannot start again on it.
 */
public final class FreePorts {
    private static final int LOW = 20_000;
    private static final int HIGH = 32_000;
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    private FreePorts() {}

    /** A port nothing listens on now and that this JVM has not handed out before. */
    public static int next() {
        for (int tries = 0; tries < 500; tries++) {
            int candidate = ThreadLocalRandom.current().nextInt(LOW, HIGH);
            if (HANDED_OUT.contains(candidate) || !bindable(candidate)) {
                continue;
            }
            if (HANDED_OUT.add(candidate)) {
                return candidate;
            }
        }
        throw new UncheckedIOException(new IOException("no free port found in " + LOW + ".." + (HIGH - 1)));
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket(port)) {
            return true;
        } catch (IOException taken) {
            return false;
        }
    }
}
