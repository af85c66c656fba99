package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose heap is below what a node needs refuses to start, saying why and what to do, and writes
 * nothing; the heap no longer depends on the quota (the state is on disk). The config's sizes are checked by name.
 */
class HeapCheckTest {
    @TempDir
    Path dir;

    @Test
    void aNodeWithAHeapTooSmallRefusesToStartWithAClearMessage() throws Exception {
        Path storage = dir.resolve("n1");
        Path conf = dir.resolve("n1.properties");
        Files.writeString(conf, "id=n1\npeers=n1=127.0.0.1:1\nstorage=" + storage + "\nquota.bytes=256MiB\n");
        Path out = dir.resolve("out.txt");
        Process node = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-cp", System.getProperty("java.class.path"), NodeMain.class.getName(), "--conf", conf.toString())
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
        assertTrue(said.contains("node n1 will not start: a node needs a heap of at least 192 MiB, and this one has"), said);
        assertTrue(said.contains("-Xmx192m"), said);
        assertFalse(said.contains("\tat "), "one line, not a stack trace: " + said);
        assertFalse(Files.exists(storage), "nothing was written");
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
        assertEquals(NodeConfig.DEFAULT_QUOTA_BYTES, NodeConfig.of("n1", java.util.Map.of("n1", "h:1"), dir).effectiveQuota(),
                "with none configured a node proposes a disk's worth");
    }

    @Test
    void theStoresSizesAreReadAndCheckedByName() throws IOException {
        Path conf = dir.resolve("n1.properties");
        Files.writeString(conf, "id=n1\npeers=n1=127.0.0.1:1\nstorage=x\nstore.block.cache=32MiB\nstore.write.buffer=16MiB\n"
                + "store.min.free=2GiB\n");
        NodeConfig config = NodeConfig.load(conf, dir);
        assertEquals(32L << 20, config.store().blockCacheBytes());
        assertEquals(16L << 20, config.store().writeBufferBytes());
        assertEquals(2L << 30, config.minFreeBytes());
        Files.writeString(conf, "id=n1\npeers=n1=127.0.0.1:1\nstorage=x\nstore.block.cache=12KiB\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NodeConfig.load(conf, dir));
        assertTrue(e.getMessage().contains("at least 1 MiB"), e.getMessage());
    }
}
