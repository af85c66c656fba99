package io.ratchet.chaos;

import io.ratchet.chaos.workload.Workload;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.AuthTable;
import io.ratchet.protocol.Command;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The users of a run with authentication on: the harness' administrator ({@value AuthTable#ROOT}), which
 * its own clients use (status, membership, setup checks, final reads), and one user per workload whose
 * role may write the workload's {@linkplain Workload#keyPrefixes() key prefixes} and nothing else. So the
 * workloads run as a deployment's applications would, each confined to its keys, and a key a workload
 * touches outside them, or a token that stops working, shows up as a refused operation.
 *
 * @param rootToken the administrator's token
 * @param tokens    each workload's user's token, by workload name
 * @param grants    each workload's prefixes, by workload name, for the report
 */
record WorkloadUsers(String rootToken, Map<String, String> tokens, Map<String, List<String>> grants) {
    static final String ADMIN = "chaos-admin";

    /**
     * Adds the users and their grants, then turns authentication on, through {@code client} (which needs
     * no token: authentication is still off). Each step is one log entry; a step without an answer
     * throws, and the run fails before any workload starts.
     */
    static WorkloadUsers create(RatchetClient client, List<Workload> workloads) {
        String rootToken = client.addUser(ADMIN, List.of(AuthTable.ROOT));
        Map<String, String> tokens = new LinkedHashMap<>();
        Map<String, List<String>> grants = new LinkedHashMap<>();
        for (Workload w : workloads) {
            String role = "chaos-" + w.name();
            for (String prefix : w.keyPrefixes()) {
                client.changeAuth(new Command.AuthChange.Grant(role, AuthTable.Permission.WRITE, prefix));
            }
            tokens.put(w.name(), client.addUser(role, List.of(role)));
            grants.put(w.name(), w.keyPrefixes());
        }
        client.changeAuth(new Command.AuthChange.Enable(true));
        return new WorkloadUsers(rootToken, Map.copyOf(tokens), grants);
    }

    String tokenOf(Workload workload) {
        return tokens.get(workload.name());
    }

    /** {@code register [register/], locks [locks/a, ...]}: what the report names. */
    String describe() {
        StringBuilder s = new StringBuilder(ADMIN + " (root) for the harness; write on ");
        grants.forEach((w, prefixes) -> s.append(w).append(' ').append(prefixes).append(", "));
        return s.substring(0, s.length() - 2) + " for each workload's own user";
    }
}
