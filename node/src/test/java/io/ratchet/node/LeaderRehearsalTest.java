package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The rehearsal of Ratis' leader path that a node runs once per JVM before it starts ({@link LeaderRehearsal}).
 * A failed rehearsal never stops a node, it only logs a warning, so this is what notices one that no
 * longer works (a Ratis upgrade that changes how a listener or a lone voter behaves): it must elect,
 * answer every request, and leave no directory, no metrics and none of Ratis' log lines about its servers behind;
 * and it sweeps the directories of rehearsals that a killed node left.
 */
class LeaderRehearsalTest {

    @Test
    void aRehearsalElectsAnswersAndLeavesNothingBehind(@TempDir Path dir) throws Exception {
        NodeConfig config = NodeConfig.of("n1", Map.of("n1", "127.0.0.1:" + FreePorts.next()), dir.resolve("n1"));
        // One left by a node killed while it rehearsed two hours ago, one of a rehearsal running now.
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        Path stale = Files.createDirectories(Files.createTempDirectory(tmp, "ratchet-rehearsal").resolve("rehearsal-leader"));
        Files.setLastModifiedTime(stale.getParent(), FileTime.from(Instant.now().minus(Duration.ofHours(2))));
        Path running = Files.createTempDirectory(tmp, "ratchet-rehearsal");
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        Logger ratis = (Logger) LoggerFactory.getLogger("org.apache.ratis");
        Level testLevel = ratis.getLevel();
        ratis.setLevel(Level.INFO); // as a node logs it (tests keep Ratis at WARN)
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
        Path rehearsed;
        try {
            rehearsed = LeaderRehearsal.run(RatchetNode.properties(config));
        } finally {
            root.detachAppender(logged);
            ratis.setLevel(testLevel);
        }

        // Other tests' clusters may still be closing in this JVM: only lines that are the rehearsal's count,
        // those logged on the thread that ran it or on its servers' threads, or naming its servers.
        String thread = Thread.currentThread().getName();
        List<String> ratisLines = logged.list.stream().filter(e -> e.getLoggerName().startsWith("org.apache.ratis"))
                .filter(e -> e.getThreadName().equals(thread) || e.getThreadName().startsWith("rehearsal-")
                        || e.getFormattedMessage().contains("rehearsal-"))
                .map(ILoggingEvent::getFormattedMessage).toList();
        assertEquals(List.of(), ratisLines, "Ratis' lines about the rehearsal's servers are kept out of the node's log");

        assertFalse(Files.exists(rehearsed), "the rehearsal's directory is deleted: " + rehearsed);
        assertFalse(Files.exists(stale.getParent()), "an hour-old rehearsal's directory is swept: " + stale.getParent());
        assertTrue(Files.isDirectory(running), "a recent one is left to its rehearsal: " + running);
        Files.delete(running);
        // Ratis drops a server's last registries from its closing threads, a moment after close returns. One
        // it may keep: gRPC's per-server message metrics, which Ratis 3.3.0 creates lazily and unsynchronised
        // on the first calls (MetricServerInterceptor.interceptCall), so two first calls at once count the
        // registry twice and close releases it once. A few timers, once per JVM, never exported (RatisMetrics
        // reads the node's own members only).
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertEquals(List.of(),
                MetricRegistries.global().getMetricRegistries().stream()
                        .map(RatisMetricRegistry::getMetricRegistryInfo)
                        .filter(info -> !"server_message_metrics".equals(info.getMetricsComponentName()))
                        .map(info -> info.getPrefix() + " " + info.getMetricsComponentName())
                        .filter(name -> name.contains("rehearsal")).toList(),
                "Ratis' registries of the rehearsal's servers are gone"));
        assertTrue(Files.notExists(dir.resolve("n1")) || isEmpty(dir.resolve("n1")), "the node's own storage is untouched");
    }

    private static boolean isEmpty(Path dir) throws Exception {
        try (var files = Files.list(dir)) {
            return files.findAny().isEmpty();
        }
    }
}
