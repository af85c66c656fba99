package io.ratchet.statemachine;

import io.ratchet.protocol.AuthTableCodec;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;

/**
 * The snapshot format of the releases that held the state in the heap, read to convert such a node's
 * storage to the disk store once (at {@link RatchetStateMachine}'s start) and to restore backups they took, and written by
 * tests that make such files. A store's snapshot on disk: a magic number and format version, the last entry index and cluster
 * time, the items, documents, tombstones, remembered idempotent results and client sessions, and a CRC32C of
 * everything before it, in the snapshot's own layout ({@link SnapshotCodec}). Written to a temporary
 * file, synced, then renamed into place atomically, so a crash leaves either the old snapshot or the
 * whole new one.
 */
public final class SnapshotFile {
    private static final int MAGIC = 0x52434831; // "RCH1"
    /**
     * 2: remembered idempotent results carry the fingerprint of their request. 3: client sessions follow
     * the remembered results. 4: each fingerprint says whether it is canonical ({@link RequestFingerprint});
     * those of 2 and 3 are not. 5: the quota follows the sessions, and results include a quota's. 6: the
     * permission table ({@link io.ratchet.protocol.AuthTable}) follows the quota. A node reads 2 (as having
     * no sessions), 3, 4 (as having the default quota), 5 (as having no users, authentication off) and 6.
     */
    private static final byte FORMAT_VERSION = 6;
    private static final byte WITHOUT_SESSIONS = 2;
    private static final byte WITHOUT_FINGERPRINT_KIND = 3;
    private static final byte WITHOUT_QUOTA = 4;
    private static final byte WITHOUT_AUTH = 5;

    private SnapshotFile() {
    }

    public static void write(CompareExchangeStore store, Path target) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        try (FileOutputStream file = new FileOutputStream(tmp.toFile())) {
            CRC32C crc = new CRC32C();
            DataOutputStream out = new DataOutputStream(
                    new CheckedOutputStream(new BufferedOutputStream(file, 1 << 16), crc));
            out.writeInt(MAGIC);
            out.writeByte(FORMAT_VERSION);
            out.writeLong(store.lastEntryIndex());
            out.writeLong(store.clusterTime());
            out.writeLong(store.size());
            try (Items.CloseableIterator<Item> items = store.items()) {
                while (items.hasNext()) {
                    SnapshotCodec.writeItem(out, items.next());
                }
            }
            out.writeLong(store.documents().size());
            for (Document d : store.documents()) {
                SnapshotCodec.writeDocument(out, d);
            }
            out.writeLong(store.tombstoneWatermark());
            out.writeLong(store.tombstones().size());
            for (Map.Entry<String, Long> t : store.tombstones().entrySet()) {
                SnapshotCodec.writeString(out, t.getKey());
                out.writeLong(t.getValue());
            }
            out.writeLong(store.remembered().size());
            for (Map.Entry<String, RememberedRequests.Remembered> r : store.remembered().entrySet()) {
                SnapshotCodec.writeString(out, r.getKey());
                out.writeLong(r.getValue().until());
                out.writeLong(r.getValue().fingerprint());
                out.writeBoolean(r.getValue().canonical());
                SnapshotCodec.writeResults(out, r.getValue().results());
            }
            out.writeLong(store.sessions().size());
            for (ClientSessions.Session session : store.sessions().all()) {
                out.writeLong(session.id);
                out.writeLong(session.timeoutMillis);
                out.writeLong(session.lastActive);
                out.writeLong(session.lastSequence);
                if (session.lastSequence > 0) {
                    SnapshotCodec.writeResults(out, store.sessions().lastResults(session));
                }
            }
            out.writeLong(store.quota());
            out.writeBoolean(store.quotaSet());
            AuthTableCodec.write(out, store.auth());
            long checksum = crc.getValue();
            out.writeLong(checksum);
            out.flush();
            file.getFD().sync();
        }
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
        syncDirectory(target.getParent());
    }

    /**
     * Reads a snapshot back in one pass, checking the checksum at the end. When the content does not
     * parse, the checksum over the whole file tells a damaged file from an intact one in a layout this
     * build does not read.
     */
    public static CompareExchangeStore read(Path source) throws IOException {
        return read(source, new io.ratchet.statemachine.kv.MemoryKeyValueStore());
    }

    /**
     * Reads a snapshot into {@code kv}, which must hold no state, in chunks as it is read; returns the
     * store over it. When this throws, {@code kv} holds part of a state without its position: discard it.
     */
    public static CompareExchangeStore read(Path source, io.ratchet.statemachine.kv.KeyValueStore kv) throws IOException {
        return read(source, kv, 0, 0);
    }

    /**
     * {@link #read(Path, io.ratchet.statemachine.kv.KeyValueStore)}, the store then at the Raft position
     * {@code term}, {@code index} (at least the snapshot's own last entry): the position Ratis named the
     * snapshot by, which counts configuration entries the store never saw.
     */
    public static CompareExchangeStore read(Path source, io.ratchet.statemachine.kv.KeyValueStore kv, long term,
                                            long index) throws IOException {
        try (InputStream file = Files.newInputStream(source)) {
            CRC32C crc = new CRC32C();
            DataInputStream in = new DataInputStream(new CheckedInputStream(new BufferedInputStream(file, 1 << 16), crc));
            if (in.readInt() != MAGIC) {
                throw new IOException(source + " is not a Ratchet snapshot");
            }
            byte version = in.readByte();
            if (version < WITHOUT_SESSIONS || version > FORMAT_VERSION) {
                throw new IOException(source + " has snapshot format " + version + "; this node reads "
                        + WITHOUT_SESSIONS + " to " + FORMAT_VERSION);
            }
            long lastEntryIndex = in.readLong();
            long clusterTime = in.readLong();
            CompareExchangeStore store = CompareExchangeStore.importing(kv, clusterTime, Math.max(lastEntryIndex, index), term);
            long count = in.readLong();
            for (long i = 0; i < count; i++) {
                store.restoreItem(SnapshotCodec.readItem(in));
            }
            long documentCount = in.readLong();
            for (long i = 0; i < documentCount; i++) {
                store.restoreDocument(SnapshotCodec.readDocument(in));
            }
            long watermark = in.readLong();
            long tombstoneCount = in.readLong();
            Map<String, Long> tombstones = new LinkedHashMap<>();
            for (long i = 0; i < tombstoneCount; i++) {
                tombstones.put(SnapshotCodec.readString(in), in.readLong());
            }
            store.restoreTombstones(tombstones, watermark);
            long rememberedCount = in.readLong();
            for (long i = 0; i < rememberedCount; i++) {
                String key = SnapshotCodec.readString(in);
                long until = in.readLong();
                long fingerprint = in.readLong();
                boolean canonical = version > WITHOUT_FINGERPRINT_KIND && in.readBoolean();
                store.restoreRemembered(key, new RememberedRequests.Remembered(until, fingerprint, canonical,
                        SnapshotCodec.readResults(in)));
            }
            long sessionCount = version == WITHOUT_SESSIONS ? 0 : in.readLong();
            for (long i = 0; i < sessionCount; i++) {
                ClientSessions.Session session = new ClientSessions.Session(in.readLong(), in.readLong(), in.readLong());
                session.lastSequence = in.readLong();
                List<io.ratchet.protocol.Result> lastResults = session.lastSequence > 0
                        ? List.copyOf(SnapshotCodec.readResults(in)) : null;
                store.restoreSession(session, lastResults);
            }
            if (version > WITHOUT_QUOTA) {
                store.restoreQuota(in.readLong(), in.readBoolean());
            }
            if (version > WITHOUT_AUTH) {
                store.restoreAuth(AuthTableCodec.read(in));
            }
            long expected = crc.getValue();
            long stored = in.readLong();
            if (stored != expected) {
                throw new IOException(source + " is corrupt: checksum " + Long.toHexString(stored)
                        + " where the content gives " + Long.toHexString(expected));
            }
            if (in.read() != -1) {
                throw new IOException(source + " is corrupt: bytes after the checksum");
            }
            return store.restored();
        } catch (EOFException | SnapshotCodec.SnapshotFormatException | InvalidCommandException
                 | IllegalStateException e) {
            // Items go into the store as they are read, so a damaged file can fail the store's own checks
            // before the checksum at its end is reached: the checksum then says which it was.
            verifyChecksum(source);
            throw new IOException(source + " has a valid checksum but does not parse as snapshot format "
                    + FORMAT_VERSION + " (" + e.getMessage() + "): most likely a build with another layout wrote it", e);
        }
    }

    /** Checks the CRC32C trailer against everything before it, without parsing. */
    private static void verifyChecksum(Path source) throws IOException {
        long size = Files.size(source);
        if (size < Integer.BYTES + 1 + Long.BYTES) {
            throw new IOException(source + " is truncated: " + size + " bytes");
        }
        CRC32C crc = new CRC32C();
        try (InputStream file = Files.newInputStream(source)) {
            byte[] buffer = new byte[1 << 16];
            long remaining = size - Long.BYTES;
            while (remaining > 0) {
                int n = file.read(buffer, 0, (int) Math.min(buffer.length, remaining));
                if (n < 0) {
                    throw new IOException(source + " is truncated");
                }
                crc.update(buffer, 0, n);
                remaining -= n;
            }
            long stored = new DataInputStream(file).readLong();
            if (stored != crc.getValue()) {
                throw new IOException(source + " is corrupt or truncated: checksum " + Long.toHexString(stored)
                        + " where the content gives " + Long.toHexString(crc.getValue()));
            }
        }
    }

    /** Makes the rename itself durable. */
    private static void syncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }
}
