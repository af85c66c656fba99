package io.ratchet.cli;

import io.ratchet.client.ErrorCode;

/**
 * The command line's exit codes: scripts branch on them. Each failure's comes from its {@link ErrorCode}
 * ({@link ErrorCode#exitCode()}); these name them for the commands that return one themselves.
 */
public final class ExitCode {
    public static final int DONE = 0;
    /** A condition failed (index mismatch, key present on create-only) or the key is absent. */
    public static final int CONDITION_FAILED = ErrorCode.CONDITION_FAILED.exitCode();
    /** Bad input: nothing was sent or nothing was written. */
    public static final int INVALID = ErrorCode.INVALID_REQUEST.exitCode();
    /** No leader (or no node) answered in time; a write was certainly not applied. */
    public static final int UNAVAILABLE = ErrorCode.CLUSTER_UNAVAILABLE.exitCode();
    /** A write got no answer: it may or may not have been applied. */
    public static final int UNKNOWN_OUTCOME = ErrorCode.UNKNOWN_OUTCOME.exitCode();
    /**
     * Storage is full: the write would take the state over the cluster's storage quota (see {@code ratchet
     * quota}), or the leader's disk is under its floor. Nothing was written.
     */
    public static final int QUOTA_EXCEEDED = ErrorCode.QUOTA_EXCEEDED.exitCode();
    /**
     * The cluster refused an administrative change its state does not allow (a member that exists, a node
     * that does not answer, a removal that would lose the majority): nothing changed.
     */
    public static final int REFUSED = ErrorCode.ADMIN_REFUSED.exitCode();
    /** Authentication is on and the command named no user (no token, a wrong one, or a removed user's). */
    public static final int UNAUTHENTICATED = ErrorCode.UNAUTHENTICATED.exitCode();
    /** The user has no permission for it; the message names the key and permission. Nothing was written. */
    public static final int FORBIDDEN = ErrorCode.PERMISSION_DENIED.exitCode();
    /** Anything else: a bug; the message and stack trace go to stderr. */
    public static final int INTERNAL_ERROR = ErrorCode.INTERNAL_ERROR.exitCode();

    private ExitCode() {
    }
}
