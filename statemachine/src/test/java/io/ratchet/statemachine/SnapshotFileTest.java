package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotFileTest {
    @TempDir
    Path dir;

    private CompareExchangeStore populated() {
        CompareExchangeStore store = new CompareExchangeStore();
        store.applyEntry(entry(1_000, new Command.Put("a", "{\"x\":1}", 0, null, 5_000, false)), 1);
        store.applyEntry(entry(1_100, new Command.Transaction(List.of(new Command.PutDocument("users/1", "{}", 0)))), 2);
        store.applyEntry(entry(1_200, new Command.Put("b", "2", 0, null)), 3);
        store.applyEntry(entry(1_300, new Command.Delete("b", 3)), 4);
        store.applyEntry(Entry.untagged(1_400, List.of(new Request("idem", 60_000, List.of(new Command.Put("c", "3", 0, null))))), 5);
        return store;
    }

    @Test
    void aSnapshotRestoresTheWholeState() throws IOException {
        CompareExchangeStore store = populated();
        Path file = dir.resolve("snapshot.1_5");
        SnapshotFile.write(store, file);
        CompareExchangeStore copy = SnapshotFile.read(file);

        assertEquals(store.list("", 0, Integer.MAX_VALUE), copy.list("", 0, Integer.MAX_VALUE));
        assertEquals(List.copyOf(store.documents()), List.copyOf(copy.documents()));
        assertEquals(store.clusterTime(), copy.clusterTime());
        assertEquals(store.lastChange("b"), copy.lastChange("b"));
        assertEquals(store.expiredAt(10_000, 10), copy.expiredAt(10_000, 10));
        // the remembered idempotent result survives: a resend after restore is still answered from it
        Request resend = new Request("idem", 60_000, List.of(new Command.Put("c", "3", 0, null)));
        List<Result> answer = copy.applyEntry(Entry.untagged(2_000, List.of(resend)), 6);
        assertEquals(true, ((Result.Write) answer.get(0)).successful());
        assertEquals(5, copy.get("c").index());
    }

    @Test
    void aCorruptOrTruncatedSnapshotIsRefused() throws IOException {
        Path file = dir.resolve("snapshot.1_5");
        SnapshotFile.write(populated(), file);
        byte[] bytes = Files.readAllBytes(file);
        byte[] flipped = bytes.clone();
        flipped[bytes.length / 2] ^= 0x40;
        Files.write(file, flipped);
        assertTrue(assertThrows(IOException.class, () -> SnapshotFile.read(file)).getMessage().contains("checksum"));
        Files.write(file, java.util.Arrays.copyOf(bytes, bytes.length - 5));
        assertTrue(assertThrows(IOException.class, () -> SnapshotFile.read(file)).getMessage().contains("checksum"));
        Files.write(file, new byte[3]);
        assertTrue(assertThrows(IOException.class, () -> SnapshotFile.read(file)).getMessage().contains("truncated"));
    }

    /** What an old development build's snapshot looked like to a newer node: intact, but another layout. */
    @Test
    void anIntactSnapshotInAnotherLayoutIsRefusedAsSuch() throws IOException {
        Path file = dir.resolve("snapshot.2_20");
        SnapshotFile.write(populated(), file);
        byte[] bytes = Files.readAllBytes(file);
        // Keep magic and version, scramble the body after the header, and give it a valid checksum.
        int header = Integer.BYTES + 1 + 2 * Long.BYTES;
        byte[] other = bytes.clone();
        for (int i = header; i < other.length - Long.BYTES; i++) {
            other[i] = (byte) 0x31;
        }
        CRC32C crc = new CRC32C();
        crc.update(other, 0, other.length - Long.BYTES);
        ByteBuffer.wrap(other, other.length - Long.BYTES, Long.BYTES).putLong(crc.getValue());
        Files.write(file, other);

        IOException refused = assertThrows(IOException.class, () -> SnapshotFile.read(file));
        assertTrue(refused.getMessage().contains("does not parse"), refused.getMessage());
    }
}
