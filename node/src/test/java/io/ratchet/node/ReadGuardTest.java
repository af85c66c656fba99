package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.Test;

class ReadGuardTest {
    private static final RaftPeerId N1 = RaftPeerId.valueOf("n1");
    private static final RaftPeerId N3 = RaftPeerId.valueOf("n3");

    @Test
    void aReadWaitsWhileItsNodeFollowsTheLeaderItAskedAndHeardFromItLately() {
        assertNull(ReadGuard.lost("n2", N1, true, N1, 0, 300));
        assertNull(ReadGuard.lost("n2", N1, true, N1, 299, 300));
    }

    @Test
    void aLeaderSilentForTheMinimumElectionTimeoutIsLost() {
        assertEquals("node n2 has not heard from its leader for 300 ms", ReadGuard.lost("n2", N1, true, N1, 300, 300));
    }

    @Test
    void aNodeFollowingAnotherLeaderOrNoneGivesTheReadUp() {
        assertEquals("node n2 follows leader n3 now, not n1", ReadGuard.lost("n2", N1, true, N3, 0, 300));
        assertEquals("node n2 follows no leader now, not n1", ReadGuard.lost("n2", N1, true, null, 0, 300));
    }

    @Test
    void aNodeThatStandsForElectionOrLeadsNowGivesTheReadUp() {
        assertEquals("node n2 no longer follows leader n1 (it stands for election or leads now)",
                ReadGuard.lost("n2", N1, false, null, 0, 300));
    }
}
