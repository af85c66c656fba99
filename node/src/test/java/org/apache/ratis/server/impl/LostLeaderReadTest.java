package org.apache.ratis.server.impl;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.RatchetException;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A follower that has not heard from its leader for the minimum election timeout refuses a linearizable
 * read at once, naming no leader, instead of asking that leader for the read index, which waits out
 * Ratis' request timeout when the leader is paused. One real node follows a leader stood in for by one
 * heartbeat made here; its election timeout is long enough that it does not stand meanwhile.
 */
class LostLeaderReadTest {
    @Test
    void aFollowerWhoseLeaderWentQuietRefusesReadsAtOnce(@TempDir Path dir) throws Exception {
        try (LoneFollower lone = LoneFollower.start(dir, Duration.ofSeconds(1), Duration.ofSeconds(120));
             RatchetClient client = RatchetClient.connect(ClientOptions.parse("n1=" + lone.address())
                     .withTimeouts(Duration.ofMillis(500), 2, Duration.ofSeconds(2)))) {
            RaftServerImpl follower = lone.follower();

            // n2 leads term 1: one heartbeat, then nothing (paused, or cut off).
            lone.heartbeatFrom("n2", 1);

            await().atMost(Duration.ofSeconds(10)).until(() -> follower.getRoleInfoProto().getFollowerInfo()
                    .getLeaderInfo().getLastRpcElapsedTimeMs() >= 1_000);
            RatchetException e = assertThrows(RatchetException.class, () -> client.get("k"));
            // A follower that stood for election meanwhile (its timeout is drawn from 1..120 s) knows no leader
            // and refuses for that reason instead: nothing this test can tell apart.
            assumeTrue(follower.getInfo().getCurrentRole() == RaftPeerRole.FOLLOWER, "the follower stood for election");
            assertTrue(e.getMessage().contains("has not heard from its leader"), e.getMessage());
        }
    }
}
