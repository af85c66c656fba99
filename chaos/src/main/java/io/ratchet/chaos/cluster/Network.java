package io.ratchet.chaos.cluster;

import java.util.List;

/** Where the nodes live and how they are reached: loopback, or network namespaces the harness made. */
public interface Network extends AutoCloseable {
    /** The {@code host:port} node number {@code n} (1-based) listens on and its peers reach it at. */
    String address(int n);

    /** What goes before {@code java} in node {@code n}'s command line (nothing, or {@code ip netns exec NS}). */
    List<String> launcher(int n);

    /** One line for the report. */
    String describe();

    /** Removes everything the network created. Idempotent; never throws. */
    @Override
    void close();
}
