package io.ratchet.chaos.nemesis;

import java.io.IOException;

/**
 * A fault in force, and how to undo it.
 *
 * @param kind        {@code kill}, {@code pause}, {@code partition}, {@code clock}, {@code slow-disk},
 *                    {@code disk-error}, or a membership change: {@code grow}, {@code shrink}, {@code replace},
 *                    {@code transfer}
 * @param description what was done, e.g. {@code killed n2 (the leader, pid 4711)}
 * @param healer      undoes it and says what it did; null for a change that is meant to last
 */
public record Fault(String kind, String description, Healer healer) {

    /** Undoes one fault. */
    @FunctionalInterface
    public interface Healer {
        String heal() throws IOException;
    }

    /** A change with nothing to undo (a member added or removed): no fault spell, no heal. */
    public static Fault lasting(String kind, String description) {
        return new Fault(kind, description, null);
    }

    public boolean lasts() {
        return healer == null;
    }

    public String heal() throws IOException {
        return healer == null ? "nothing to undo" : healer.heal();
    }
}
