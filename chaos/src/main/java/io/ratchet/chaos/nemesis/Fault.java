package io.ratchet.chaos.nemesis;

import java.io.IOException;

/**
 * A fault in force, and how to undo it.
 *
 * @param kind        {@code kill}, {@code pause} or {@code partition}
 * @param description what was done, e.g. {@code killed n2 (the leader, pid 4711)}
 * @param healer      undoes it and says what it did
 */
public record Fault(String kind, String description, Healer healer) {

    /** Undoes one fault. */
    @FunctionalInterface
    public interface Healer {
        String heal() throws IOException;
    }

    public String heal() throws IOException {
        return healer.heal();
    }
}
