package io.ratchet.node;

import io.ratchet.statemachine.UnreadableEntryException;
import java.nio.file.Path;

/**
 * Why a node stopped serving on its own: its storage failed under it (the Raft log could not be written or
 * synced, or the store could not apply), or its log holds an entry a later release wrote that it cannot
 * read ({@link #laterRelease()}). A full disk is told apart by the free space left when it failed,
 * not by the error's wording: a node on a full disk waits for space and starts again, one whose disk
 * returns I/O errors stops for good (see {@link NodeMain}).
 *
 * @param cause     what failed
 * @param freeBytes the free space of the storage's file system when it failed
 */
public record StorageFailure(Throwable cause, long freeBytes) {
    /** Below this much free space a failed write is the disk being full. */
    static final long FULL_BELOW_BYTES = 16L << 20;

    static StorageFailure of(Throwable cause, Path storage) {
        return new StorageFailure(cause, storage.toFile().getUsableSpace());
    }

    /** Whether the disk ran out of space, rather than failing. */
    public boolean diskFull() {
        return !laterRelease() && freeBytes < FULL_BELOW_BYTES;
    }

    /** Whether the log holds an entry of a later release's format: this node must be upgraded to go on. */
    public boolean laterRelease() {
        return cause instanceof UnreadableEntryException;
    }

    /** The free space a node waits for after its disk filled: its floor, and no less than twice {@link #FULL_BELOW_BYTES}. */
    static long resumeAt(long floorBytes) {
        return Math.max(floorBytes, 2 * FULL_BELOW_BYTES);
    }

    @Override
    public String toString() {
        if (laterRelease()) {
            return cause.getMessage();
        }
        return (diskFull() ? "the disk is full (" + freeBytes + " bytes free)" : "an I/O error") + ": " + cause;
    }
}
