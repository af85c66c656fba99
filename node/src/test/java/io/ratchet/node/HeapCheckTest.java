package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A node whose heap cannot hold its quota refuses to start, saying why and what to do, and writes nothing. */
class HeapCheckTest {
    @TempDir
    Path dir;

    @Test
    void aNodeWithAHeapTooSmallForItsQuotaRefusesToStartWithAClearMessage() throws Exception {
        Path storage = dir.resolve("n1");
        Path conf = dir.resolve("n1.properties");
        Files.writeString(conf, "id=n1\npeers=n1=127.0.0.1:1\nstorage=" + storage + "\nquota.bytes=256MiB\n");
        Path out = dir.resolve("out.txt");
        Process node = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", System.getProperty("java.class.path"), NodeMain.class.getName(), "--conf", conf.toString())
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        try {
            assertTrue(node.waitFor(60, TimeUnit.SECONDS), "the node exits instead of starting");
            assertEquals(1, node.exitValue());
        } finally {
            node.destroyForcibly();
        }
        String said = Files.readString(out);
        assertTrue(said.contains("node n1 will not start: a storage quota of 256 MiB needs a heap of at least 704 MiB"), said);
        assertTrue(said.contains("-Xmx704m"), said);
        assertFalse(said.contains("\tat "), "one line, not a stack trace: " + said);
        assertFalse(Files.exists(storage), "nothing was written");
    }

    /** The cluster's quota, once set through the log, is checked too: its snapshot carries it. */
    @Test
    void aNodeWhoseSnapshotHoldsAQuotaItsHeapCannotHoldRefusesToStart() throws Exception {
        Path storage;
        String peers;
        try (LocalCluster cluster = LocalCluster.start(1, dir, c -> c.withSnapshotThreshold(16, 1L << 20))) {
            cluster.client().setQuota(1L << 30);
            for (int i = 0; i < 40; i++) {
                cluster.client().put("k/" + i, i, 0);
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                try (var files = Files.walk(cluster.config("n1").storage())) {
                    return files.anyMatch(f -> f.getFileName().toString().startsWith("snapshot."));
                }
            });
            storage = cluster.config("n1").storage();
            peers = "n1=" + cluster.address("n1");
        }
        Path conf = dir.resolve("restart.properties");
        // Its own quota fits the heap, so the start-up check passes; the snapshot's does not.
        Files.writeString(conf, "id=n1\npeers=" + peers + "\nstorage=" + storage + "\nquota.bytes=32MiB\n");
        Path out = dir.resolve("restart.txt");
        Process node = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx300m", "-cp", System.getProperty("java.class.path"), NodeMain.class.getName(), "--conf", conf.toString())
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        try {
            assertTrue(node.waitFor(60, TimeUnit.SECONDS), "the node exits instead of serving: " + Files.readString(out));
            assertEquals(1, node.exitValue(), Files.readString(out));
        } finally {
            node.destroyForcibly();
        }
        String said = Files.readString(out);
        assertTrue(said.contains("a storage quota of 1024 MiB needs a heap of at least 2240 MiB"), said);
    }

    @Test
    void aQuotaBelowTheMinimumInTheConfigIsRefusedByName() throws IOException {
        Path conf = dir.resolve("n1.properties");
        Files.writeString(conf, "id=n1\npeers=n1=127.0.0.1:1\nstorage=x\nquota.bytes=12KiB\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NodeConfig.load(conf, dir));
        assertTrue(e.getMessage().contains("quota.bytes must be"), e.getMessage());
        Files.writeString(conf, "id=n1\npeers=n1=127.0.0.1:1\nstorage=x\nquota.bytes=lots\n");
        e = assertThrows(IllegalArgumentException.class, () -> NodeConfig.load(conf, dir));
        assertTrue(e.getMessage().contains("'quota.bytes'") && e.getMessage().contains("not a size"), e.getMessage());
        Files.writeString(conf, "id=n1\npeers=n1=127.0.0.1:1\nstorage=x\nquota.bytes=64MiB\n");
        assertEquals(64L << 20, NodeConfig.load(conf, dir).quotaBytes());
    }
}
