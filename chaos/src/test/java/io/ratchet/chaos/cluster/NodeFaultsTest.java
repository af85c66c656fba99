package io.ratchet.chaos.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fault library in a real JVM ({@link FaultProbe}): a clock step moves the wall clock and not the
 * monotonic one, a failing disk fails writes and fsyncs under the node's storage only, a stalled one
 * delays them, and each is undone in place while the process runs.
 */
class NodeFaultsTest {
    @TempDir
    Path dir;
    private Process probe;

    @AfterEach
    void stop() throws InterruptedException {
        if (probe != null) {
            probe.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void stepsTheWallClockAndFailsOnlyTheStoragesDiskWhileTheProcessRuns() throws Exception {
        NodeFaults faults = NodeFaults.prepare(dir.resolve("faults"));
        assumeTrue(faults.unavailable().isEmpty(), "needs a C compiler: " + faults.unavailable().orElse(""));
        Path storage = Files.createDirectories(dir.resolve("n1"));
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Map<String, String> env = faults.environment("n1", storage);
        assertTrue(env.get("LD_PRELOAD").endsWith("libratchet-nodefaults.so"), env.toString());
        assertEquals(32, Files.size(dir.resolve("faults/n1.faults")), "the control record is 32 bytes");

        Path out = dir.resolve("probe.out");
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), FaultProbe.class.getName(), storage.toString(), elsewhere.toString())
                .redirectErrorStream(true).redirectOutput(out.toFile());
        builder.environment().putAll(env);
        probe = builder.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> last(out).contains("inside=ok outside=ok"));
        assertTrue(ahead(last(out)) < 1_000, last(out));

        faults.stepClock("n1", 300);
        faults.failDisk("n1");
        // One probe line reads the clock before it writes, so the first line that fails may still predate the
        // step: wait for a line that shows both.
        await().atMost(Duration.ofSeconds(10)).until(() -> last(out).contains("inside=EIO outside=ok") && ahead(last(out)) > 299_000);
        long ahead = ahead(last(out));
        assertTrue(ahead < 301_000, "the wall clock is five minutes ahead, the monotonic clock not: " + last(out));

        faults.stepClock("n1", -120);
        faults.stallSyncs("n1", 400);
        await().atMost(Duration.ofSeconds(10)).until(() -> last(out).contains("inside=ok outside=ok") && ahead(last(out)) < -119_000);
        await().atMost(Duration.ofSeconds(10)).until(() -> millis(last(out)) >= 400);

        faults.healDisk("n1");
        faults.stepClock("n1", 0);
        await().atMost(Duration.ofSeconds(10)).until(() -> last(out).contains("inside=ok outside=ok")
                && Math.abs(ahead(last(out))) < 1_000 && millis(last(out)) < 400);
        assertEquals(32, Files.size(dir.resolve("faults/n1.faults")), "rewritten in place, never shorter");
    }

    private static String last(Path out) throws Exception {
        List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
        // The last whole line: the probe may be writing the next one.
        return lines.size() < 2 ? "" : lines.get(lines.size() - 2);
    }

    private static long ahead(String line) {
        return Long.parseLong(line.substring("ahead=".length(), line.indexOf(' ')));
    }

    /** How long the probe's write and fsync under the storage took. */
    private static long millis(String line) {
        return Long.parseLong(line.substring(line.indexOf(" ms=") + " ms=".length()).trim());
    }
}
