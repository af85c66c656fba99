package io.ratchet.statemachine;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Where a follower that fell behind the leader's log gets the leader's state: the node fetches a
 * checkpoint of it over its own channel to the leader (the state machine knows no network).
 */
public interface SnapshotSource {
    /**
     * Fetches a checkpoint of the state of the node at {@code leaderAddress} into {@code target}, a
     * directory that does not exist yet, verified whole (its digest) before this returns.
     *
     * @throws IOException when it cannot be had whole; nothing in {@code target} is to be trusted then
     */
    void fetch(String leaderAddress, Path target) throws IOException;

    /** A source that has nothing: a machine without one cannot install a snapshot (tests). */
    SnapshotSource NONE = (leader, target) -> {
        throw new IOException("this node has no way to fetch a snapshot from " + leader);
    };
}
