package io.ratchet.statemachine;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.NewerFormatException;

/**
 * A committed log entry this replica cannot read because a later release wrote it: the replica stops
 * applying (and its node stops) instead of skipping the entry and drifting from the replicas that applied it.
 * A node sees this only when a later release leads a cluster some of whose members were not yet upgraded
 * and that release writes a format they do not read; "Versions and upgrades" in docs/DESIGN.md says when
 * a release may.
 */
public final class UnreadableEntryException extends IllegalStateException {
    private final long index;

    public UnreadableEntryException(long index, NewerFormatException cause) {
        super("log entry " + index + " was written by a later release, in log format " + cause.format()
                + "; this release reads format " + Codec.FORMAT_VERSION, cause);
        this.index = index;
    }

    /** The entry's index in the log. */
    public long index() {
        return index;
    }
}
