package io.ratchet.cli;

/** The command line's exit codes: scripts branch on them. */
public final class ExitCode {
    public static final int DONE = 0;
    /** A condition failed (index mismatch, key present on create-only) or the key is absent. */
    public static final int CONDITION_FAILED = 1;
    /** Bad input: nothing was sent or nothing was written. */
    public static final int INVALID = 2;
    /** No leader (or no node) answered in time; nothing is known to have been written. */
    public static final int UNAVAILABLE = 3;
    /** A write got no answer: it may or may not have been applied. */
    public static final int UNKNOWN_OUTCOME = 4;
    /** The write would take the state over the cluster's storage quota: nothing was written (see {@code ratchet quota}). */
    public static final int QUOTA_EXCEEDED = 6;
    /**
     * The cluster refused an administrative change its state does not allow (a member that exists, a node
     * that does not answer, a removal that would lose the majority): nothing changed.
     */
    public static final int REFUSED = 7;
    /** Authentication is on and the command named no user (no token, a wrong one, or a removed user's). */
    public static final int UNAUTHENTICATED = 8;
    /** The user has no permission for it; the message names the key and permission. Nothing was written. */
    public static final int FORBIDDEN = 9;
    /** Anything else: a bug; the message and stack trace go to stderr. */
    public static final int INTERNAL_ERROR = 5;

    private ExitCode() {
    }
}
