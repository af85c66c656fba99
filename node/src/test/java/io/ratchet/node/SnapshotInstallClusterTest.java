package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import io.ratchet.statemachine.SnapshotInstallations;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotReplyProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotResult;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.RaftServerProtocol;
import org.apache.ratis.server.protocol.TermIndex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A follower told to install a snapshot while its log already reaches the leader's: the case a follower
 * whose log conflicts with the leader's meets when it first answers with a commit index below the
 * leader's log. Ratis 3.3.0 loads what the state machine installed only at the leader's next
 * notification, and this leader sends none (the follower's later answers name its own log's next index,
 * which the leader's log holds): without {@code SnapshotInstallations} the follower refuses every append
 * for as long as this leader leads.
 */
class SnapshotInstallClusterTest {
    @TempDir
    Path dir;

    @Test
    void aFollowerFinishesAnInstallationTheLeaderDoesNotNotifyAgain() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient client = cluster.client();
            for (int i = 0; i < 20; i++) {
                assertTrue(client.put("before" + i, "v", 0).successful());
            }
            String leaderId = cluster.awaitLeader();
            String followerId = cluster.nodeIds().stream().filter(id -> !id.equals(leaderId)).findFirst().orElseThrow();
            RaftServer.Division leader = cluster.division(leaderId);
            RaftServer.Division follower = cluster.division(followerId);
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> follower.getInfo().getLastAppliedIndex() >= leader.getRaftLog().getLastCommittedIndex());

            // The leader's notification, as its appender makes one: its name, its term, the first index it offers.
            TermIndex firstAvailable = leader.getRaftLog().getTermIndex(leader.getInfo().getLastAppliedIndex());
            InstallSnapshotRequestProto notification = SnapshotInstallations.notification(follower, leader.getId(),
                    leader.getInfo().getCurrentTerm(), firstAvailable);
            InstallSnapshotReplyProto reply = ((RaftServerProtocol) follower).installSnapshot(notification);
            assertEquals(InstallSnapshotResult.IN_PROGRESS, reply.getResult(), "the state machine fetches a checkpoint");

            for (int i = 0; i < 20; i++) {
                assertTrue(client.put("after" + i, "v", 0).successful());
            }
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertTrue(
                    follower.getInfo().getLastAppliedIndex() >= leader.getRaftLog().getLastCommittedIndex(),
                    "the follower applies again: " + follower.getInfo().getLastAppliedIndex() + " of "
                            + leader.getRaftLog().getLastCommittedIndex()));
            assertTrue(follower.getRaftLog().getSnapshotIndex() >= firstAvailable.getIndex() - 1,
                    "it runs on the checkpoint it fetched");
            assertTrue(cluster.itemsOn(followerId).stream().map(Item::key).anyMatch("after19"::equals),
                    "and holds what was written after it");
        }
    }
}
