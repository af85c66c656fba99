package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.AdminRefusedException;
import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterAdmin;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Membership changes on a real in-process cluster: a node started to join waits, catches up from a
 * snapshot once added, becomes a voter and can lead; what cannot work or would lose the majority is
 * refused with the configuration unchanged.
 */
class MembershipClusterTest {
    @TempDir
    Path dir;

    @Test
    void aJoinedNodeCatchesUpFromTheSnapshotLeadsAndChangesThatCannotWorkAreRefused() throws IOException {
        // Snapshots every 64 entries, so the log the new node needs has been purged: it gets a snapshot.
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withSnapshotThreshold(64, 1 << 20))) {
            RatchetClient client = cluster.client();
            for (int i = 0; i < 300; i++) {
                assertTrue(client.put("m/" + i, Integer.toString(i), 0).successful());
            }
            String address = cluster.startJoining("n4");
            assertFalse(cluster.node("n4").isMember(), "a joining node is in no configuration");
            assertNull(cluster.division("n4").getInfo().getLeaderId(), "and does not form a cluster of its own");

            try (ClusterAdmin admin = ClusterAdmin.connect(ClientOptions.parse(cluster.peers()))) {
                ClusterAdmin.Membership before = admin.members();
                assertEquals(Set.of("n1", "n2", "n3"), ids(before));

                ClusterAdmin.Membership after = admin.addMember("n4", address);
                assertEquals(Set.of("n1", "n2", "n3", "n4"), ids(after));
                assertTrue(after.members().stream().allMatch(m -> m.role().equals("VOTER")));
                assertTrue(after.index() > before.index());
                assertTrue(cluster.node("n4").isMember());
                String leader = cluster.awaitLeader();
                await().atMost(Duration.ofSeconds(20)).until(() -> cluster.appliedIndex("n4") >= cluster.appliedIndex(leader));
                assertEquals(keys(cluster.itemsOn(leader)), keys(cluster.itemsOn("n4")));

                // Refused, and nothing changes.
                long index = admin.members().index();
                assertRefused(() -> admin.addMember("n4", address), "n4 is already a member");
                assertRefused(() -> admin.addMember("n5", cluster.address("n1")), "already the address of member n1");
                assertRefused(() -> admin.addMember("n5", "127.0.0.1:1"), "no node answers at 127.0.0.1:1");
                assertRefused(() -> admin.removeMember("n9"), "n9 is not a member");
                assertEquals(index, admin.members().index());
                // A follower sends a transfer to the leader, whose configuration decides, without judging
                // the target by its own configuration, which may lag (it refused a new member once).
                String follower = cluster.nodeIds().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
                JsonNode redirect = cluster.adminCall(follower, "{\"op\":\"leader.transfer\",\"id\":\"n9\"}");
                assertEquals("not_leader", redirect.path("error").asText(), redirect.toString());
                assertEquals(leader, redirect.path("leader").path("id").asText(), redirect.toString());
                assertRefused(() -> admin.transferLeadership("n9"), "n9 is not a voting member");

                admin.transferLeadership("n4");
                assertEquals("n4", cluster.awaitLeader());
                assertTrue(client.put("m/after-transfer", "1", 0).successful(), "the joined node leads writes");

                assertEquals(Set.of("n1", "n3", "n4"), ids(admin.removeMember("n2")));
                cluster.stopNode("n2");
                // {n1, n3, n4} with n3 down: without n1 only n4 of {n3, n4} is live, short of a majority of 2.
                cluster.stopNode("n3");
                await().atMost(Duration.ofSeconds(10)).until(() -> silentFor("n3", cluster.division("n4")) > 1_000);
                assertRefused(() -> admin.removeMember("n1"), "the change needs 2");
                assertEquals(Set.of("n1", "n3", "n4"), ids(admin.members()));
                // Removing the dead one leaves {n1, n4}, both live: allowed, and writes go on.
                assertEquals(Set.of("n1", "n4"), ids(admin.removeMember("n3")));
                assertTrue(client.put("m/after-shrink", "1", 0).successful());
            }
        }
    }

    /** How long the leader {@code leader} has not heard from {@code follower}. */
    private static long silentFor(String follower, RaftServer.Division leader) {
        return leader.getInfo().getRoleInfoProto().getLeaderInfo().getFollowerInfoList().stream()
                .filter(f -> f.getId().getId().toStringUtf8().equals(follower))
                .mapToLong(f -> f.getLastRpcElapsedTimeMs()).findFirst().orElse(Long.MAX_VALUE);
    }

    private static void assertRefused(org.junit.jupiter.api.function.Executable change, String why) {
        AdminRefusedException e = assertThrows(AdminRefusedException.class, change);
        assertTrue(e.getMessage().contains(why), e.getMessage());
    }

    private static Set<String> ids(ClusterAdmin.Membership m) {
        return m.members().stream().map(ClusterAdmin.Member::id).collect(Collectors.toSet());
    }

    private static List<String> keys(List<Item> items) {
        return items.stream().map(Item::key).sorted().toList();
    }
}
