package io.ratchet.client;

import io.ratchet.common.Readiness;
import java.util.List;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one rule that /health/ready and {@code ratchet status} share. */
class ReadinessTest {
    @Test
    void aFollowerThatKnowsItsLeaderAndKeepsUpIsReady() {
        Readiness follower = new Readiness(true, "n1", 5000, 5000 + Readiness.MAX_APPLY_LAG);
        assertTrue(follower.ready());
        assertEquals(List.of(), follower.failed());
    }

    @Test
    void aNodeCatchingUpIsNotReadyUntilItIsWithinTheBound() {
        Readiness replaying = new Readiness(true, "n1", 5000, 5001 + Readiness.MAX_APPLY_LAG);
        assertFalse(replaying.ready());
        assertEquals(List.of("applied index 5000 trails commit index 6001 by more than 1000"), replaying.failed());
    }

    @Test
    void aCandidateCutOffFromItsPeersKnowsNoLeader() {
        assertEquals(List.of("no leader known"), new Readiness(true, null, 7, 7).failed());
    }

    @Test
    void aNodeThatDidNotAnswerTheStatusCallIsNotReady() {
        NodeStatus down = NodeStatus.unreachable("n3", "127.0.0.1:7103", "connection refused");
        assertFalse(down.readiness().ready());
        assertTrue(down.readiness().failed().contains("not a member of its Raft group"));
    }
}
