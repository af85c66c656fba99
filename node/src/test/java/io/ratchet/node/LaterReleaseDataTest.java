package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import io.ratchet.statemachine.RatchetStateMachine;
import io.ratchet.statemachine.kv.Changes;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node started on storage whose store a later release laid out (after a downgrade, or a data directory
 * copied from an upgraded machine) refuses to start in one line that says so, and leaves the data as it was.
 */
class LaterReleaseDataTest {
    @TempDir
    Path dir;

    @Test
    void aNodeOnALaterReleasesStoreRefusesToStartSayingWhy() throws Exception {
        int port = FreePorts.next();
        Path storage = dir.resolve("n1");
        NodeConfig config = NodeConfig.of("n1", Map.of("n1", "127.0.0.1:" + port), storage);
        Path db;
        try (RatchetNode node = RatchetNode.start(config);
             RatchetClient client = RatchetClient.connect("127.0.0.1:" + port)) {
            assertTrue(client.put("kept", 1, 0).successful());
            db = storage.resolve(node.groupId().getUuid().toString()).resolve("sm").resolve(RatchetStateMachine.DB);
        }
        // The store's position record, its first byte the layout, as a later release would have written it.
        Method key = Class.forName("io.ratchet.statemachine.StoreMeta").getDeclaredMethod("key");
        key.setAccessible(true);
        byte[] metaKey = (byte[]) key.invoke(null);
        byte[] later;
        try (RocksKeyValueStore kv = RocksKeyValueStore.open(db, RocksKeyValueStore.Settings.DEFAULT)) {
            later = kv.get(metaKey);
            later[0]++;
            Changes change = new Changes();
            change.put(metaKey, later);
            kv.write(change);
        }

        Path conf = dir.resolve("n1.properties");
        Files.writeString(conf, "id=n1\npeers=n1=127.0.0.1:" + port + "\nstorage=" + storage + "\n");
        Path out = dir.resolve("out.txt");
        Process node = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", System.getProperty("java.class.path"), NodeMain.class.getName(), "--conf", conf.toString())
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try {
            assertTrue(node.waitFor(20, TimeUnit.SECONDS), "the node exits instead of starting: " + Files.readString(out));
            assertEquals(1, node.exitValue());
        } finally {
            node.destroyForcibly();
        }
        // Ratis logs the failure its own way before; the last line, what an operator reads first, is ours.
        String said = Files.readString(out);
        java.util.List<String> lines = said.lines().filter(l -> !l.isBlank()).toList();
        assertTrue(lines.get(lines.size() - 1).startsWith("ratchet node n1: node n1 will not start: the store holds state in"
                + " layout " + later[0] + ", which a later release wrote; this release reads layout 1"), said);
        assertFalse(said.contains("Exception in thread"), "ended by the node, not by an uncaught exception: " + said);
        try (RocksKeyValueStore kv = RocksKeyValueStore.open(db, RocksKeyValueStore.Settings.DEFAULT)) {
            assertEquals(later[0], kv.get(metaKey)[0], "the data is left as it was");
        }
    }
}
