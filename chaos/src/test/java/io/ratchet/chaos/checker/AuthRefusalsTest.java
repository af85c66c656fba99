package io.ratchet.chaos.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.Script;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A workload confined to its prefixes, on a cluster with authentication on. */
class AuthRefusalsTest {
    private final Script s = new Script("register");

    @Test
    void operationsThatFailForOtherReasonsAreNoRefusals() {
        s.call("1", "put", "register/k0", "{\"index\":0,\"value\":1}", "{\"successful\":true,\"index\":5,\"value\":1}");
        s.fail(s.invoke("2", "read", "register/k0", "{}"), "ClusterUnavailableException: no leader");
        s.info(s.invoke("3", "put", "register/k1", "{\"index\":0,\"value\":2}"));
        CheckResult r = AuthRefusals.check(s.ops());
        assertEquals(Validity.VALID, r.validity(), r.toString());
    }

    @Test
    void aWriteOutsideTheWorkloadsPrefixIsAnAnomaly() {
        s.call("1", "put", "register/k0", "{\"index\":0,\"value\":1}", "{\"successful\":true,\"index\":5,\"value\":1}");
        Op denied = s.fail(s.invoke("2", "put", "emails/a", "{\"index\":0,\"value\":2}"),
                "PermissionDeniedException: user 'chaos-register' has no write permission on 'emails/a'");
        CheckResult r = AuthRefusals.check(s.ops());
        assertEquals(Validity.INVALID, r.validity());
        assertEquals(List.of(new Anomaly("register", "permission-denied", "emails/a",
                "refused: " + denied.error(), List.of(denied.index()))), r.anomalies());
    }

    @Test
    void aTokenThatStopsWorkingIsAnAnomaly() {
        s.fail(s.invoke("4", "read", "register/k2", "{}"), "AuthenticationException: the token names no user");
        assertEquals(List.of("not-authenticated"), AuthRefusals.check(s.ops()).anomalies().stream().map(Anomaly::type).toList());
        assertEquals(1, AuthRefusals.refusals(s.ops()).size());
    }
}
