package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A leader that cannot lead well hands over; when Ratis refuses the transfer (as it does to any transfer
 * while a configuration change is under way, or here to a peer outside the configuration), it steps down
 * instead, and the voters elect a leader of a later term.
 */
class HandOverClusterTest {
    @TempDir
    Path dir;

    @Test
    void aRefusedTransferLeavesTheLeaderButTheFallbackStepsItDown() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient client = cluster.client();
            assertTrue(client.put("k", "v", 0).successful());
            String leader = cluster.awaitLeader();
            RatchetNode node = cluster.node(leader);
            HandOver handOver = new HandOver(node.raftServer(), node.groupIds().get(0));
            long term = cluster.division(leader).getInfo().getCurrentTerm();

            assertFalse(handOver.to(RaftPeerId.valueOf("n9")).get(10, TimeUnit.SECONDS), "refused: n9 is no member");
            assertEquals(term, cluster.division(leader).getInfo().getCurrentTerm(), "and nothing changed");
            assertTrue(cluster.division(leader).getInfo().isLeader());

            assertTrue(handOver.toOrStepDown(RaftPeerId.valueOf("n9")).get(10, TimeUnit.SECONDS), "stepped down instead");
            await().atMost(Duration.ofSeconds(20)).until(() -> cluster.nodeIds().stream()
                    .anyMatch(id -> cluster.division(id).getInfo().isLeader() && cluster.division(id).getInfo().isLeaderReady()
                            && cluster.division(id).getInfo().getCurrentTerm() > term));
            assertTrue(client.put("k2", "v", 0).successful(), "the leader the voters elected serves writes");
        }
    }
}
