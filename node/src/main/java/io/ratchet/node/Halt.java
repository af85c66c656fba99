package io.ratchet.node;

import io.ratchet.statemachine.UnreadableEntryException;
import java.nio.file.Path;

/**
 * Why a node must stop serving on its own, as its replica told it ({@code RatchetStateMachine.onMustStop}),
 * and what the process then does ({@link NodeMain}). The reason is a type, so that each one's handling is
 * one arm of a switch the compiler checks.
 *
 * @param reason    why
 * @param cause     what failed
 * @param freeBytes the free space of the storage's file system when it failed
 */
public record Halt(Reason reason, Throwable cause, long freeBytes) {
    /** Below this much free space a failed write is the disk being full. */
    static final long FULL_BELOW_BYTES = 16L << 20;

    public enum Reason {
        /**
         * The disk ran out of space (told apart by the free space left, not by the error's wording): the node
         * closes, waits for room and starts again.
         */
        DISK_FULL,
        /** The disk failed a write or an fsync: the process ends with {@link NodeMain#EXIT_STORAGE}. */
        DISK_FAILED,
        /**
         * The log holds an entry of a later release's format: the process ends with
         * {@link NodeMain#EXIT_LATER_RELEASE}; the node goes on once that release is installed.
         */
        LATER_RELEASE
    }

    static Halt of(Throwable cause, Path storage) {
        long free = storage.toFile().getUsableSpace();
        Reason reason = cause instanceof UnreadableEntryException ? Reason.LATER_RELEASE
                : free < FULL_BELOW_BYTES ? Reason.DISK_FULL
                : Reason.DISK_FAILED;
        return new Halt(reason, cause, free);
    }

    /** The free space a node waits for after its disk filled: its floor, and no less than twice {@link #FULL_BELOW_BYTES}. */
    static long resumeAt(long floorBytes) {
        return Math.max(floorBytes, 2 * FULL_BELOW_BYTES);
    }

    @Override
    public String toString() {
        return switch (reason) {
            case LATER_RELEASE -> cause.getMessage();
            case DISK_FULL -> "the disk is full (" + freeBytes + " bytes free): " + cause;
            case DISK_FAILED -> "an I/O error: " + cause;
        };
    }
}
