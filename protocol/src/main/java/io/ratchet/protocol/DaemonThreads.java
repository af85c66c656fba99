package io.ratchet.protocol;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Threads that never keep a JVM alive, named for what they do ({@code name-1}, {@code name-2}, ...):
 * the one factory for the client's, the front end's and the node's own threads.
 */
public final class DaemonThreads {
    private DaemonThreads() {
    }

    public static ThreadFactory named(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
