package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.BackupHeader;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.InvalidBackupException;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backup file: the state between a header and a SHA-256, verified whole and turned into a store when
 * taken in. The state is a checkpoint of a store; a backup of the heap releases (a snapshot file) is
 * converted on the way.
 */
class BackupFileTest {
    private static final UUID CLUSTER = UUID.randomUUID();
    private static final RocksKeyValueStore.Settings SMALL = new RocksKeyValueStore.Settings(4 << 20, 2 << 20);

    @TempDir
    Path dir;

    private static void populate(CompareExchangeStore store) {
        store.applyEntry(entry(1_000, new Command.Put("emails/ada@example.com", "\"users/1\"", 0, null)), 3, 2);
        store.applyEntry(entry(1_100, new Command.Transaction(java.util.List.of(new Command.PutDocument("users/1", "{}", 0)))), 4, 2);
        store.applyEntry(entry(1_200, new Command.Put("stock/widgets", "10", 0, null, 9_000, false)), 6, 2);
    }

    /** A backup of a populated store at {@code index}, written as a node streams it. */
    private Path backup(long index) throws IOException {
        Path checkpoint = dir.resolve("checkpoint");
        try (RocksKeyValueStore kv = RocksKeyValueStore.open(dir.resolve("live"), SMALL)) {
            populate(new CompareExchangeStore(kv));
            kv.checkpoint(checkpoint);
        }
        CheckpointArchive archive = CheckpointArchive.of(checkpoint);
        return write(new BackupHeader("ratchet", CLUSTER, 2, index, 1_700_000_000_000L, archive.bytes()),
                BackupFile.open(new BackupHeader("ratchet", CLUSTER, 2, index, 1_700_000_000_000L, archive.bytes()), archive));
    }

    private Path write(BackupHeader header, InputStream backup) throws IOException {
        Path file = dir.resolve("backup.rbk");
        try (InputStream in = backup; OutputStream out = Files.newOutputStream(file)) {
            in.transferTo(out);
        }
        assertEquals(header.fileBytes(), Files.size(file));
        return file;
    }

    private static void assertPopulated(CompareExchangeStore restored) {
        CompareExchangeStore expected = new CompareExchangeStore();
        populate(expected);
        assertEquals(expected.list("", 0, Integer.MAX_VALUE), restored.list("", 0, Integer.MAX_VALUE));
        assertEquals(expected.document("users/1"), restored.document("users/1"));
        assertEquals(expected.clusterTime(), restored.clusterTime());
        assertEquals(expected.used(), restored.used());
    }

    @Test
    void aBackupOfACheckpointUnpacksIntoTheStoreItWasTakenFrom() throws IOException {
        Path file = backup(6);
        BackupFile.Received received = BackupFile.unpack(file, dir.resolve("restored"), SMALL);
        assertEquals(6, received.position().getIndex());
        assertEquals(2, received.position().getTerm());
        assertEquals(HexFormat.of().formatHex(BackupHeader.newDigest().digest(Files.readAllBytes(file))), received.sha256());
        try (RocksKeyValueStore kv = RocksKeyValueStore.open(dir.resolve("restored"), SMALL)) {
            assertPopulated(new CompareExchangeStore(kv));
        }
    }

    @Test
    void aBackupOfAHeapReleaseIsConvertedIntoAStore() throws IOException {
        CompareExchangeStore old = new CompareExchangeStore();
        populate(old);
        Path state = dir.resolve("state.snapshot");
        SnapshotFile.write(old, state);
        BackupHeader header = new BackupHeader(BackupHeader.SNAPSHOT_FORMAT, "ratchet", CLUSTER, 2, 6, 0, Files.size(state));
        Path file = write(header, BackupFile.open(header, Files.newInputStream(state)));
        BackupFile.Received received = BackupFile.unpack(file, dir.resolve("restored"), SMALL);
        assertEquals(6, received.position().getIndex());
        assertFalse(Files.exists(dir.resolve("restored.snapshot")), "the snapshot passed through a file that is gone");
        try (RocksKeyValueStore kv = RocksKeyValueStore.open(dir.resolve("restored"), SMALL)) {
            assertPopulated(new CompareExchangeStore(kv));
        }
    }

    @Test
    void aFlippedByteInTheStateIsRefusedAsCorruptAndLeavesNothing() throws IOException {
        Path file = backup(6);
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length - 40] ^= 0x08;
        Files.write(file, bytes);
        InvalidBackupException refused = assertThrows(InvalidBackupException.class,
                () -> BackupFile.unpack(file, dir.resolve("restored"), SMALL));
        assertEquals(file + " is corrupt: the SHA-256 at its end does not match its content", refused.getMessage());
        assertFalse(Files.exists(dir.resolve("restored")));
    }

    @Test
    void aTruncatedBackupIsRefusedAsTruncated() throws IOException {
        Path file = backup(6);
        byte[] bytes = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(bytes, bytes.length - 100));
        InvalidBackupException refused = assertThrows(InvalidBackupException.class,
                () -> BackupFile.unpack(file, dir.resolve("restored"), SMALL));
        assertEquals(file + " is truncated (or its header damaged): it holds " + (bytes.length - 100) + " of the "
                + bytes.length + " bytes its header announces", refused.getMessage());
        assertFalse(Files.exists(dir.resolve("restored")));
    }

    /** What a build with another layout would meet: the digest matches, the state does not parse. */
    @Test
    void anIntactBackupWhoseStateCannotBeReadIsRefusedAsSuch() throws IOException {
        byte[] garbage = {0, 0, 0, 1, 0, 7, 'C', 'U', 'R', 'R', 'E', 'N', 'T', 0, 0, 0, 0, 0, 0, 0, 1, 'x'};
        BackupHeader header = new BackupHeader("ratchet", CLUSTER, 2, 7, 0, garbage.length);
        Path file = write(header, BackupFile.open(header, new ByteArrayInputStream(garbage)));
        String message = assertThrows(InvalidBackupException.class,
                () -> BackupFile.unpack(file, dir.resolve("restored"), SMALL)).getMessage();
        assertTrue(message.startsWith(file + " is intact but its state cannot be read: "), message);
    }

    @Test
    void aHeaderIndexOtherThanTheStatesIsRefusedAsInconsistent() throws IOException {
        Path file = backup(5);
        String message = assertThrows(InvalidBackupException.class,
                () -> BackupFile.unpack(file, dir.resolve("restored"), SMALL)).getMessage();
        assertEquals(file + " is inconsistent: its state holds entry 6, not the index 5 its header names", message);
    }
}
