package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.common.Release;
import io.ratchet.node.FreePorts;
import io.ratchet.node.LocalCluster;
import io.ratchet.protocol.Json;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ratchet status}: every node at a glance, with the readiness its {@code /health/ready} probe
 * would report, as text and as JSON.
 */
class StatusCommandTest {
    @TempDir
    Path dir;

    private static CommandRun ratchet(String... args) {
        return CommandRun.of(args);
    }

    @Test
    void everyNodeOfAHealthyClusterIsReadyAndANodeThatDoesNotAnswerIsNot() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            ratchet("put", "status/k", "1", "--index", "0", "--peers", cluster.peers());
            // A fourth address where nothing listens: the operator's list names a node that is down.
            String peers = cluster.peers() + ",n4=127.0.0.1:" + FreePorts.next();

            CommandRun json = ratchet("status", "--json", "--peers", peers, "--timeout", "5s");
            assertEquals(ExitCode.DONE, json.code(), json.toString());
            JsonNode status = Json.parse(json.out());
            String leader = status.get("leader").asText();
            assertEquals(4, status.get("nodes").size());
            Set<String> ready = new HashSet<>();
            for (JsonNode node : status.get("nodes")) {
                String id = node.get("id").asText();
                if (id.equals("n4")) {
                    assertFalse(node.get("ready").asBoolean());
                    assertEquals("UNREACHABLE", node.get("role").asText());
                    assertEquals("did not answer", node.get("notReady").get(0).asText());
                    continue;
                }
                assertTrue(node.get("ready").asBoolean(), node.toString());
                assertEquals(0, node.get("notReady").size());
                assertEquals(leader, node.get("leader").asText(), "every node knows the leader");
                assertEquals(Release.version(), node.get("release").asText(), "each node says its release");
                assertTrue(node.get("commitIndex").asLong() >= node.get("appliedIndex").asLong() - 1000);
                assertTrue(node.get("appliedIndex").asLong() >= 1);
                ready.add(id);
            }
            assertEquals(Set.of("n1", "n2", "n3"), ready);

            CommandRun text = ratchet("status", "--peers", peers, "--timeout", "5s");
            assertEquals(ExitCode.DONE, text.code(), text.toString());
            List<String> lines = text.out().lines().toList();
            assertEquals("leader: " + leader, lines.get(0));
            assertEquals("release: " + Release.version(), lines.get(1), "one release, said once");
            // The quota reads 256 MiB (what apply assumes) until the first leader's proposal of its own
            // (8 GiB, or its disk's size) has committed: the status may come before or after it.
            for (String line : lines.subList(2, 5)) {
                assertTrue(line.matches("n[123] .* term \\d+ +commit \\d+ +applied \\d+ +items \\d+ +ready"
                        + "  storage [\\d.]+ (B|KiB) of [\\d.]+ (MiB|GiB) \\(0%\\)"), line);
            }
            assertTrue(lines.get(5).matches("n4 .*UNREACHABLE.* not ready .*"), lines.get(5));
        }
    }
}
