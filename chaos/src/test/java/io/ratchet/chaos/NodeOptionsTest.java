package io.ratchet.chaos;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.node.ReferencePage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The chaos nodes' default JVM options: as chaos/README.md gives them, and a released node's heap and collector. */
class NodeOptionsTest {
    private static final Path ROOT = ReferencePage.directory().getParent().getParent();

    @Test
    void theReadmeGivesTheDefault() throws IOException {
        String readme = Files.readString(ROOT.resolve("chaos/README.md")).replaceAll("\\s+", " ");
        assertTrue(readme.contains("`" + ChaosCommand.DEFAULT_NODE_OPTIONS + "`"),
                "chaos/README.md should name the default RATCHET_NODE_OPTS, " + ChaosCommand.DEFAULT_NODE_OPTIONS);
    }

    @Test
    void theDefaultHasAReleasedNodesHeapAndCollector() throws IOException {
        List<String> defaults = Arrays.asList(ChaosCommand.DEFAULT_NODE_OPTIONS.split(" "));
        List<String> released = Files.readAllLines(ROOT.resolve("dist/src/main/archive/conf/jvm.options")).stream()
                .map(String::strip)
                .filter(line -> line.startsWith("-Xms") || line.startsWith("-Xmx") || line.matches("-XX:\\+Use\\w+GC"))
                .toList();
        assertTrue(released.size() >= 3, "conf/jvm.options should set the heap and the collector: " + released);
        assertTrue(defaults.containsAll(released), "the chaos nodes' default " + defaults + " should include " + released);
    }
}
