package io.ratchet.spring.boot;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ratchet.client.RatchetClient;
import io.ratchet.node.LocalCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/** The health component against a real three-node cluster: UP with a leader and a majority, DOWN without. */
class RatchetHealthIndicatorClusterTest {

    @Test
    void upWithALeaderAndAMajorityDownWhenTheMajorityIsGone(@TempDir Path dir) {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            String leader = cluster.awaitLeader();
            RatchetClient client = cluster.client();
            RatchetHealthIndicator indicator = new RatchetHealthIndicator(client);

            Health up = indicator.health(true);
            assertEquals(Status.UP, up.getStatus(), up.toString());
            assertEquals(leader, up.getDetails().get("leader"));
            assertEquals("3/3", up.getDetails().get("reachable"));
            assertEquals(false, up.getDetails().get("quotaAlarm"));

            String follower = Stream.of("n1", "n2", "n3").filter(id -> !id.equals(leader)).findFirst().orElseThrow();
            cluster.stopNode(leader);
            await().atMost(Duration.ofSeconds(30)).until(() -> indicator.health(true).getStatus(), Status.UP::equals);
            Health afterKill = indicator.health(true);
            assertEquals("2/3", afterKill.getDetails().get("reachable"), "a new leader, two nodes of three: " + afterKill);

            cluster.stopNode(follower);
            Health down = indicator.health(true);
            assertEquals(Status.DOWN, down.getStatus(), down.toString());
            assertEquals("1/3", down.getDetails().get("reachable"));
            assertEquals("UNREACHABLE", ((Map<?, ?>) down.getDetails().get("nodes")).get(leader));
        }
    }
}
