package io.ratchet.protocol;

/**
 * A front end's typed answer when it did not carry out a message: the client decides what to do from
 * {@code reason}, never from the text. Unless {@code inDoubt}, nothing was written.
 *
 * @param reason        why
 * @param leaderId      with {@link Reason#NOT_LEADER}: the leader this node knows of; with
 *                      {@link Reason#NO_LEADER}: this node, when it leads and is not ready yet; else null
 * @param leaderAddress its client address, else null
 * @param message       for people: what was wrong
 * @param inDoubt       the message had reached Ratis when it failed (a leader that stepped down with it
 *                      pending, say), so a write in it may yet be applied; false when it was refused
 *                      before, and certainly wrote nothing
 */
public record Refusal(Reason reason, String leaderId, String leaderAddress, String message, boolean inDoubt) {
    /** Why a message was refused, and the tag the codec writes for it. */
    public enum Reason implements WireKind {
        /** This node is not the leader; send writes to {@code leaderId} at {@code leaderAddress}. */
        NOT_LEADER(0),
        /**
         * No leader is known or ready yet (an election is running): try again shortly, anywhere; or, when
         * {@code leaderAddress} is set, at that node: the refusing node itself, just elected and not ready
         * yet (it applies its first entry of the term), which will serve it in a moment.
         */
        NO_LEADER(1),
        /** The message is malformed or invalid: resending it unchanged gets the same answer. */
        INVALID(2),
        /** The node failed to serve it (stopping, overloaded, a bug): safe to resend, to any node. */
        UNAVAILABLE(3),
        /** Authentication is on and the call names no user (no token, or one no user has). */
        UNAUTHENTICATED(4),
        /** The user has no permission for what the message asks; the message names the key and permission. */
        FORBIDDEN(5);

        private static final Reason[] ALL = values();
        private final byte tag;

        Reason(int tag) {
            this.tag = (byte) tag;
        }

        @Override
        public byte tag() {
            return tag;
        }

        static Reason of(int tag) {
            Reason reason = WireKind.byTag(ALL, tag);
            if (reason == null) {
                throw new InvalidCommandException("unknown refusal reason " + tag);
            }
            return reason;
        }
    }

    /** The same refusal, given after the message reached Ratis: a write in it may yet apply. */
    public Refusal afterSubmission() {
        return new Refusal(reason, leaderId, leaderAddress, message, true);
    }

    public static Refusal invalid(String message) {
        return new Refusal(Reason.INVALID, null, null, message, false);
    }

    public static Refusal unavailable(String message) {
        return new Refusal(Reason.UNAVAILABLE, null, null, message, false);
    }

    public static Refusal unauthenticated(String message) {
        return new Refusal(Reason.UNAUTHENTICATED, null, null, message, false);
    }

    public static Refusal forbidden(String message) {
        return new Refusal(Reason.FORBIDDEN, null, null, message, false);
    }

    public static Refusal noLeader(String message) {
        return new Refusal(Reason.NO_LEADER, null, null, message, false);
    }

    /** This node leads but is not ready yet: it names itself, so that the client asks it again. */
    public static Refusal leaderNotReady(String leaderId, String leaderAddress) {
        return new Refusal(Reason.NO_LEADER, leaderId, leaderAddress, "the leader is not ready yet", false);
    }

    public static Refusal notLeader(String leaderId, String leaderAddress) {
        return new Refusal(Reason.NOT_LEADER, leaderId, leaderAddress, "not the leader; the leader is " + leaderId, false);
    }
}
