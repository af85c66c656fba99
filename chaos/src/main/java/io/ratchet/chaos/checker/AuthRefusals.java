package io.ratchet.chaos.checker;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.OpType;
import io.ratchet.client.AuthenticationException;
import io.ratchet.client.PermissionDeniedException;
import java.util.ArrayList;
import java.util.List;

/**
 * The check of a run with authentication on: no client operation may be refused for its token
 * ({@link AuthenticationException}) or its permissions ({@link PermissionDeniedException}). Each workload
 * runs as a user allowed exactly its own key prefixes, and the harness as an administrator, so any such
 * refusal means the permission model and a workload disagree, or a token stopped working (through a
 * failover, a snapshot, a restart or a new member): each is an anomaly, never an expected failure.
 *
 * <p>It reads the history alone: a client process records an error as the exception's simple class name,
 * then its message ({@code ClientProcess}), so the types are found in the recorded line.
 */
public final class AuthRefusals {
    public static final String CHECK = "auth";
    private static final String DENIED = PermissionDeniedException.class.getSimpleName();
    private static final String UNAUTHENTICATED = AuthenticationException.class.getSimpleName();

    private AuthRefusals() {
    }

    /** Every completion of {@code ops} that a node refused for authentication or permission. */
    public static List<Op> refusals(List<Op> ops) {
        return ops.stream().filter(op -> (op.type() == OpType.FAIL || op.type() == OpType.INFO) && op.error() != null
                && (op.error().startsWith(DENIED) || op.error().startsWith(UNAUTHENTICATED))).toList();
    }

    public static CheckResult check(List<Op> ops) {
        List<Anomaly> anomalies = new ArrayList<>();
        for (Op op : refusals(ops)) {
            String type = op.error().startsWith(DENIED) ? "permission-denied" : "not-authenticated";
            anomalies.add(new Anomaly(op.workload(), type, op.key(), "refused: " + op.error(), List.of(op.index())));
        }
        long completions = ops.stream().filter(op -> !op.isInvoke()).count();
        return CheckResult.of(CHECK, anomalies, Validity.VALID, List.of(completions + " completions, " + anomalies.size()
                + " refused for a token or a permission (every workload runs as a user allowed its own prefixes)"));
    }
}
