package io.ratchet.client;

import io.ratchet.common.Failures;
import java.util.Locale;

/**
 * What a failure means, whatever reported it: every {@link RatchetException} has one ({@link
 * RatchetException#code()}), the command line prints it as {@code "code"} and exits with its {@link
 * #exitCode()}, and the HTTP API answers it with its {@link #httpStatus()} and {@code "code"}. A program
 * switches on {@link #wireName()} the same way over both.
 *
 * <p>Each code says what the caller may rely on: {@link #didNotApply()}, whether the write certainly did
 * not apply, and {@link #retrySafe()}, whether sending the same call again as it is, unchanged, is safe
 * and can succeed without the caller changing anything.
 */
public enum ErrorCode {
    /**
     * The request breaks the protocol's rules (a bad key, value, index, metadata, parameter or a limit).
     * Nothing was written; sent again unchanged it is refused again: fix it first.
     */
    INVALID_REQUEST(2, 400, true, false),
    /**
     * No such item, document or lock (over HTTP, also no such route). Nothing was written. Not a failure of
     * the moment: read again when you expect it to exist.
     */
    NOT_FOUND(1, 404, true, false),
    /**
     * A condition did not hold: the index a write was conditioned on has moved (a compare-exchange, a
     * transaction, a {@link io.ratchet.recipes.session.ConcurrencyException session save}). Nothing was
     * applied. The same call fails the same way: recompute from the current state and send that.
     */
    CONDITION_FAILED(1, 412, true, false),
    /**
     * A retry loop gave up: each of its attempts was refused because something it read had moved. Nothing
     * of any attempt was applied. Running the unit of work again is safe (it reads afresh), but the key is
     * contended: back off for longer, or serialize its writers.
     */
    RETRY_EXHAUSTED(1, 409, true, true),
    /**
     * A lease (a lock's, or a place in a queue) is no longer held. Usually nothing was written, but a
     * renewal or join answered later than the lease it asked for did apply and was given back, so this
     * code does not promise that nothing applied. Stop acting under the lease and acquire anew; the same
     * call cannot succeed.
     */
    LEASE_LOST(1, 412, false, false),
    /**
     * An add found no JSON integer in the signed 64-bit range under its key (a string, an object, {@code 1.5},
     * {@code 5.0}). Nothing was written; the same add fails the same way until the item holds an integer.
     */
    NOT_AN_INTEGER(1, 409, true, false),
    /**
     * An add's sum would pass the signed 64-bit range. Nothing was written; the same add fails the same way
     * until the value has moved back.
     */
    OVERFLOW(1, 409, true, false),
    /**
     * No leader (or, for a stale read, no node) answered within the client's bounded retries, and a write
     * was certainly not applied: the client reports this for a write only when no node accepted it (no
     * session opened, every connection refused). Retrying later is safe.
     */
    CLUSTER_UNAVAILABLE(3, 503, true, true),
    /**
     * A write was sent but got no answer: it may or may not have been applied. Not certain, and a blind
     * resend may apply it twice. A retry is safe only when the write carries an idempotency key (the
     * cluster answers a resend with the first outcome); otherwise read first and decide from the current
     * value and index (a resent compare-exchange cannot apply twice, but may then fail its condition
     * against its own first application).
     */
    UNKNOWN_OUTCOME(4, 504, false, false),
    /**
     * The write would take the state over the storage quota; nothing was written. Retrying is safe and
     * succeeds once space is freed (deletes, expiry) or the quota is raised.
     */
    QUOTA_EXCEEDED(6, 507, true, true),
    /**
     * The write would add to the state while the leader's disk is under its free-space floor; nothing was
     * written. Retrying is safe and succeeds once the disk has room again.
     */
    DISK_FULL(6, 507, true, true),
    /**
     * The leader refused a write carrying a command some member may not apply yet (a node of an earlier
     * release, during a rolling upgrade). Nothing was written; retrying is safe and succeeds once every
     * member runs a release with the command.
     */
    UNSUPPORTED(10, 503, true, true),
    /**
     * The cluster refused an administrative change its state does not allow (an id already a member, a
     * node that does not answer, a removal that would lose the majority, a change under way). Nothing
     * changed; read the cluster's status and decide.
     */
    ADMIN_REFUSED(7, 409, true, false),
    /**
     * Authentication is on and the call named no user (no token, or one no user has). Nothing was written;
     * the same token gets the same answer.
     */
    UNAUTHENTICATED(8, 401, true, false),
    /**
     * The user has no permission for what it asked; nothing was written (a transaction with one such key is
     * refused whole). The same call gets the same answer until the permission is granted.
     */
    PERMISSION_DENIED(9, 403, true, false),
    /**
     * Anything else: a bug, or a failure nothing classifies. Nothing is known about a write, so it is not
     * certain that it did not apply, and a blind retry is not safe.
     */
    INTERNAL_ERROR(5, 500, false, false);

    private final int exitCode;
    private final int httpStatus;
    private final boolean didNotApply;
    private final boolean retrySafe;

    ErrorCode(int exitCode, int httpStatus, boolean didNotApply, boolean retrySafe) {
        this.exitCode = exitCode;
        this.httpStatus = httpStatus;
        this.didNotApply = didNotApply;
        this.retrySafe = retrySafe;
    }

    /**
     * The code's one name, the same from the command line ({@code --json}) and the HTTP API: the constant's
     * name in lower case, e.g. {@code cluster_unavailable}.
     */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The command line's exit code for it. Several codes share one (the conditions: 1, storage: 6). */
    public int exitCode() {
        return exitCode;
    }

    /**
     * The HTTP API's status for it. Where the HTTP API has a more specific status for a failure of its own
     * (a 409 for a transaction's conflict, a 413 for a body too large), it answers that one, with this code.
     */
    public int httpStatus() {
        return httpStatus;
    }

    /** Whether the write certainly did not apply (and so changed nothing). False means it may have. */
    public boolean didNotApply() {
        return didNotApply;
    }

    /**
     * Whether the same call, sent again unchanged, is safe and may succeed: it cannot apply a write twice
     * nor over a state the caller has not read, and the failure is of the moment (no leader, no room), not
     * of the request (bad input, a moved index, no permission). See each code for what a retry needs.
     */
    public boolean retrySafe() {
        return retrySafe;
    }

    /**
     * The code of any failure, through the wrappers futures add: a {@link RatchetException}'s own, {@link
     * #INVALID_REQUEST} for an argument the client or protocol refused ({@link IllegalArgumentException},
     * which the protocol's {@code InvalidCommandException} is), else {@link #INTERNAL_ERROR}.
     */
    public static ErrorCode of(Throwable failure) {
        Throwable cause = Failures.unwrap(failure);
        if (cause instanceof RatchetException r) {
            return r.code();
        }
        return cause instanceof IllegalArgumentException ? INVALID_REQUEST : INTERNAL_ERROR;
    }
}
