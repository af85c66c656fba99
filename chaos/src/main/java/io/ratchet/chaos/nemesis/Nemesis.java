package io.ratchet.chaos.nemesis;

import java.io.IOException;
import java.util.Optional;
import java.util.Random;

/** Something that breaks the cluster on purpose, one fault at a time, and mends it. */
public interface Nemesis {
    String name();

    /** Injects one fault now; empty when there was nothing to act on (no leader known, say). */
    Optional<Fault> inject(Random random) throws IOException;

    /** Undoes every fault still in force (restarts killed nodes, resumes paused ones, heals partitions). */
    void healAll() throws IOException;
}
