package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterAdmin;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.RatchetClient;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A leader removed from its group. Ratis closes the division once the configuration without it commits,
 * while the node itself runs on (an operator removed it and has not stopped it yet, or it stops slowly).
 * The closed division still calls itself the leader, not ready: told so, a client came back to it until
 * the node was gone. In an hour's chaos soak that was the most common long gap, 8 to 10 s of every write
 * to the group after a removal (docs/CHAOS.md).
 */
class RemovedLeaderTest {
    @TempDir
    Path dir;

    @Test
    void aRemovedLeaderSendsItsClientsOnAndTheGroupWritesOn() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient client = cluster.client(cluster.options().withTimeouts(Duration.ofSeconds(1), 3, Duration.ofSeconds(5)));
            assertTrue(client.put("removed/before", "1", 0).successful());
            String leader = cluster.awaitLeader();
            try (ClusterAdmin admin = ClusterAdmin.connect(cluster.options())) {
                admin.removeMember(leader);
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> !cluster.division(leader).getInfo().isAlive());
            assertTrue(cluster.division(leader).getInfo().isLeader(), "Ratis' closed division still says it leads");

            // Asked alone, the removed node names no leader (not itself): the client moves on.
            RatchetClient alone = cluster.client(ClientOptions.parse(leader + "=" + cluster.address(leader))
                    .withTimeouts(Duration.ofMillis(500), 2, Duration.ofMillis(800)));
            ClusterUnavailableException refused = assertThrows(ClusterUnavailableException.class, () -> alone.put("removed/alone", "1", 0));
            assertTrue(refused.getMessage().contains("no longer serves group 0"), refused.getMessage());
            assertFalse(refused.getMessage().contains("not ready"), refused.getMessage());

            // The client that followed the removed leader finds the new one within its 5 s.
            assertTrue(client.put("removed/after", "1", 0).successful());
            assertTrue(client.get("removed/before").isPresent());
        }
    }
}
