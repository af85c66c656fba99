package io.ratchet.chaos.cluster;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Every node on 127.0.0.1, on consecutive ports picked free below the kernel's ephemeral range (so that
 * no client connection takes a killed node's port before it restarts).
 */
public final class LoopbackNetwork implements Network {
    private static final int LOWEST = 20_000;
    private static final int HIGHEST = 32_000;

    private final int base;

    private LoopbackNetwork(int base) {
        this.base = base;
    }

    /** Picks {@code nodes} consecutive ports that are free now. */
    public static LoopbackNetwork forNodes(int nodes) throws IOException {
        for (int attempt = 0; attempt < 100; attempt++) {
            int candidate = ThreadLocalRandom.current().nextInt(LOWEST, HIGHEST - nodes);
            boolean free = true;
            for (int n = 1; n <= nodes && free; n++) {
                free = isFree(candidate + n);
            }
            if (free) {
                return new LoopbackNetwork(candidate);
            }
        }
        throw new IOException("found no " + nodes + " consecutive free ports between " + LOWEST + " and " + HIGHEST);
    }

    private static boolean isFree(int port) {
        try {
            new ServerSocket(port, 1, InetAddress.getLoopbackAddress()).close();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public String address(int n) {
        return "127.0.0.1:" + (base + n);
    }

    @Override
    public List<String> launcher(int n) {
        return List.of();
    }

    @Override
    public String describe() {
        return "loopback, ports " + (base + 1) + "..";
    }

    @Override
    public void close() {
    }
}
