package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rehearsal of Ratis' leader path that a node runs once per JVM before it starts ({@link LeaderRehearsal}).
 * A failed rehearsal never stops a node, it only logs a warning, so this is what notices one that no
 * longer works (a Ratis upgrade that changes how a listener or a lone voter behaves): it must elect,
 * answer every request, and leave no directory and no metrics behind.
 */
class LeaderRehearsalTest {

    @Test
    void aRehearsalElectsAnswersAndLeavesNothingBehind(@TempDir Path dir) throws Exception {
        NodeConfig config = NodeConfig.of("n1", Map.of("n1", "127.0.0.1:" + FreePorts.next()), dir.resolve("n1"));
        Path rehearsed = LeaderRehearsal.run(RatchetNode.properties(config)).get(60, TimeUnit.SECONDS);

        assertFalse(Files.exists(rehearsed), "the rehearsal's directory is deleted: " + rehearsed);
        List<String> left = MetricRegistries.global().getMetricRegistries().stream()
                .map(RatisMetricRegistry::getMetricRegistryInfo)
                .map(info -> info.getPrefix() + " " + info.getMetricsComponentName())
                .filter(name -> name.contains("rehearsal")).toList();
        assertEquals(List.of(), left, "Ratis' registries of the rehearsal's servers are gone");
        assertTrue(Files.notExists(dir.resolve("n1")) || isEmpty(dir.resolve("n1")), "the node's own storage is untouched");
    }

    private static boolean isEmpty(Path dir) throws Exception {
        try (var files = Files.list(dir)) {
            return files.findAny().isEmpty();
        }
    }
}
