package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.BackupHeader;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.InvalidBackupException;
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

/** A backup file: a snapshot of the state between a header and a SHA-256, verified and parsed whole when read. */
class BackupFileTest {
    private static final UUID CLUSTER = UUID.randomUUID();

    @TempDir
    Path dir;

    private static CompareExchangeStore populated() {
        CompareExchangeStore store = new CompareExchangeStore();
        store.applyEntry(entry(1_000, new Command.Put("emails/ada@example.com", "\"users/1\"", 0, null)), 3);
        store.applyEntry(entry(1_100, new Command.Transaction(java.util.List.of(new Command.PutDocument("users/1", "{}", 0)))), 4);
        store.applyEntry(entry(1_200, new Command.Put("stock/widgets", "10", 0, null, 9_000, false)), 6);
        return store;
    }

    /** A backup of {@code store} at {@code index}, written as a node streams it. */
    private Path backup(CompareExchangeStore store, long index) throws IOException {
        Path state = dir.resolve("state.snapshot");
        SnapshotFile.write(store, state);
        BackupHeader header = new BackupHeader("ratchet", CLUSTER, 2, index, 1_700_000_000_000L, Files.size(state));
        Path file = dir.resolve("backup.rbk");
        try (InputStream in = BackupFile.open(header, state); OutputStream out = Files.newOutputStream(file)) {
            in.transferTo(out);
        }
        return file;
    }

    @Test
    void aBackupReadsBackAsTheStateItWasTakenFrom() throws IOException {
        CompareExchangeStore store = populated();
        Path file = backup(store, 7);

        BackupFile.Contents contents = BackupFile.read(file);
        assertEquals(new BackupHeader("ratchet", CLUSTER, 2, 7, 1_700_000_000_000L, contents.header().stateBytes()),
                contents.header());
        assertEquals(Files.size(file), contents.header().fileBytes());
        assertEquals(HexFormat.of().formatHex(BackupHeader.newDigest().digest(Files.readAllBytes(file))), contents.sha256());
        assertEquals(store.list("", 0, Integer.MAX_VALUE), contents.state().list("", 0, Integer.MAX_VALUE));
        assertEquals(store.document("users/1"), contents.state().document("users/1"));
        assertEquals(store.clusterTime(), contents.state().clusterTime());
        assertEquals(6, contents.state().lastEntryIndex());
    }

    @Test
    void aFlippedByteInTheStateIsRefusedAsCorrupt() throws IOException {
        Path file = backup(populated(), 7);
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length / 2] ^= 0x08;
        Files.write(file, bytes);
        InvalidBackupException refused = assertThrows(InvalidBackupException.class, () -> BackupFile.read(file));
        assertEquals(file + " is corrupt: the SHA-256 at its end does not match its content", refused.getMessage());
    }

    @Test
    void aTruncatedBackupIsRefusedAsTruncated() throws IOException {
        Path file = backup(populated(), 7);
        byte[] bytes = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(bytes, bytes.length - 100));
        InvalidBackupException refused = assertThrows(InvalidBackupException.class, () -> BackupFile.read(file));
        assertEquals(file + " is truncated (or its header damaged): it holds " + (bytes.length - 100) + " of the "
                + bytes.length + " bytes its header announces", refused.getMessage());
    }

    /** What a build with another snapshot layout would meet: the digest matches, the state does not parse. */
    @Test
    void anIntactBackupWhoseStateCannotBeReadIsRefusedAsSuch() throws IOException {
        Path state = dir.resolve("garbage.snapshot");
        Files.write(state, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18});
        Path file = dir.resolve("backup.rbk");
        try (InputStream in = BackupFile.open(new BackupHeader("ratchet", CLUSTER, 2, 7, 0, 18), state)) {
            Files.write(file, in.readAllBytes());
        }
        String message = assertThrows(InvalidBackupException.class, () -> BackupFile.read(file)).getMessage();
        assertTrue(message.startsWith(file + " is intact but its state cannot be read: "), message);
    }

    @Test
    void aHeaderIndexBelowTheStateIsRefusedAsInconsistent() throws IOException {
        Path file = backup(populated(), 5);
        String message = assertThrows(InvalidBackupException.class, () -> BackupFile.read(file)).getMessage();
        assertEquals(file + " is inconsistent: its state holds entry 6, above the index 5 its header names", message);
    }
}
