package io.ratchet.chaos.nemesis;

import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.Random;

/** Something that breaks the cluster on purpose, one fault at a time, and mends it. */
public interface Nemesis {
    String name();

    /**
     * Injects one fault now; empty when there was nothing to act on (no leader known, say).
     *
     * @throws FaultRefused when the cluster refused it and nothing changed
     */
    Optional<Fault> inject(Random random) throws IOException, FaultRefused;

    /** Undoes every fault still in force (restarts killed nodes, resumes paused ones, heals partitions). */
    void healAll() throws IOException;

    /** Lines for the report beyond the timeline (what a membership nemesis changed); none by default. */
    default List<String> notes() {
        return List.of();
    }
}
