package io.ratchet.statemachine.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The disk store keeps the contract, keeps what it flushed across a restart, and survives kill -9 whole. */
class RocksKeyValueStoreTest extends KeyValueStoreContract {
    private static final RocksKeyValueStore.Settings SMALL = new RocksKeyValueStore.Settings(8 << 20, 4 << 20);

    @TempDir
    Path dir;

    private int opened;

    @Override
    protected KeyValueStore open() {
        return RocksKeyValueStore.open(dir.resolve("db" + opened++), SMALL);
    }

    @Test
    void aWriteIsSerializedExactlyAsRocksDbsOwnWriteBatch() throws Exception {
        // Lengths around each varint boundary, an empty value, and deletes between the puts.
        Changes changes = new Changes();
        int[] lengths = {1, 127, 128, 16_383, 16_384, 70_000};
        try (org.rocksdb.WriteBatch expected = new org.rocksdb.WriteBatch()) {
            java.util.TreeMap<byte[], byte[]> sorted = new java.util.TreeMap<>(java.util.Arrays::compareUnsigned);
            for (int i = 0; i < lengths.length; i++) {
                byte[] key = new byte[lengths[i]];
                java.util.Arrays.fill(key, (byte) ('a' + i));
                byte[] value = new byte[lengths[lengths.length - 1 - i] - 1];
                java.util.Arrays.fill(value, (byte) i);
                sorted.put(key, i % 3 == 1 ? Changes.DELETED : value);
            }
            for (var change : sorted.entrySet()) {
                if (change.getValue() == Changes.DELETED) {
                    changes.delete(change.getKey());
                    expected.delete(change.getKey());
                } else {
                    changes.put(change.getKey(), change.getValue());
                    expected.put(change.getKey(), change.getValue());
                }
            }
            assertTrue(java.util.Arrays.equals(expected.data(), RocksKeyValueStore.serialized(changes)),
                    "the hand-built batch differs from RocksDB's");
        }
    }

    @Test
    void whatWasWrittenIsThereAfterACloseAndAnOpen() {
        Path db = dir.resolve("reopened");
        try (RocksKeyValueStore first = RocksKeyValueStore.open(db, SMALL)) {
            Changes changes = new Changes();
            changes.put(b("k"), b("v"));
            first.write(changes);
        }
        try (RocksKeyValueStore second = RocksKeyValueStore.open(db, SMALL)) {
            assertEquals("v", s(second.get(b("k"))));
            assertEquals(second.lastSequence(), second.flushedSequence(), "everything there at open is on disk");
        }
    }

    @Test
    void aFlushMakesEveryWriteBeforeItDurable() {
        try (RocksKeyValueStore rocks = RocksKeyValueStore.open(dir.resolve("flushed"), SMALL)) {
            long before = rocks.flushedSequence();
            Changes changes = new Changes();
            changes.put(b("k"), b("v"));
            rocks.write(changes);
            assertTrue(rocks.lastSequence() > before);
            rocks.flush();
            assertEquals(rocks.lastSequence(), rocks.flushedSequence());
        }
    }

    @Test
    void aCheckpointHoldsTheStateAsOfOneWriteAndTheStoreGoesOn() {
        try (RocksKeyValueStore rocks = RocksKeyValueStore.open(dir.resolve("live"), SMALL)) {
            Changes changes = new Changes();
            changes.put(b("a"), b("1"));
            rocks.write(changes);
            rocks.checkpoint(dir.resolve("copy"));
            changes.clear();
            changes.put(b("a"), b("2"));
            rocks.write(changes);
            assertEquals("2", s(rocks.get(b("a"))));
        }
        try (RocksKeyValueStore copy = RocksKeyValueStore.open(dir.resolve("copy"), SMALL)) {
            assertEquals("1", s(copy.get(b("a"))));
        }
    }

    /**
     * A process writing without RocksDB's log is killed with SIGKILL: the store it leaves opens, holds the
     * state as of one whole write (every key of it agrees), and holds at least every write it had
     * reported flushed.
     */
    @Test
    void killedMidWriteTheStoreHoldsAWholePrefixOfItsWrites() throws Exception {
        Path db = dir.resolve("killed");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                CrashWriter.class.getName(), db.toString()).redirectErrorStream(true).start();
        long flushedRound = -1;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("flushed ")) {
                    flushedRound = Long.parseLong(line.substring(8));
                    if (flushedRound >= 3) {
                        break; // several flushes behind it, and writes going on: kill it now
                    }
                }
            }
        } finally {
            child.destroyForcibly();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
        }
        assertTrue(flushedRound >= 3, "the writer reported its flushes");
        try (RocksKeyValueStore store = RocksKeyValueStore.open(db, SMALL)) {
            long round = Long.parseLong(s(store.get(b("round"))));
            assertTrue(round >= flushedRound, "round " + round + " survived; " + flushedRound + " was reported durable");
            for (int k = 0; k < CrashWriter.KEYS; k++) {
                assertEquals(Long.toString(round), s(store.get(b("key-" + k))), "key-" + k + " belongs to another write");
            }
            assertNull(store.get(b("key-" + CrashWriter.KEYS)));
        }
        assertTrue(Files.isDirectory(db));
        assertTrue(new File(db.toFile(), "CURRENT").isFile());
    }
}
