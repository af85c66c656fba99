package io.ratchet.statemachine;

import io.ratchet.protocol.BackupCheck;
import io.ratchet.protocol.BackupHeader;
import io.ratchet.protocol.InvalidBackupException;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import io.ratchet.statemachine.kv.StorageException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.SequenceInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.util.Enumeration;
import java.util.Iterator;
import java.util.List;
import java.util.function.Supplier;
import org.apache.ratis.server.protocol.TermIndex;

/**
 * A backup ({@link BackupHeader} has the layout): a header, the state, and a SHA-256 of everything
 * before it. A node writes one from a checkpoint of its store ({@link CheckpointArchive}); the same
 * stream is what a follower fetches from the leader. {@link Receiver} takes one in, as it arrives or as
 * it is read from a file, and leaves a store directory holding its state, verified whole: a backup of
 * the heap releases (a snapshot file) is converted into a store on the way.
 */
public final class BackupFile {
    private BackupFile() {
    }

    /**
     * The bytes of a backup whose state is {@code state} ({@code header.stateBytes()} long), made as they
     * are read: the header, the state, then the digest of both. The caller closes the stream.
     */
    public static InputStream open(BackupHeader header, InputStream state) {
        MessageDigest digest = BackupHeader.newDigest();
        InputStream body = new DigestInputStream(new SequenceInputStream(new ByteArrayInputStream(header.encode()), state), digest);
        // The digest is taken only once the body has been read to its end.
        Iterator<Supplier<InputStream>> parts = List.<Supplier<InputStream>>of(
                () -> body, () -> new ByteArrayInputStream(digest.digest())).iterator();
        return new SequenceInputStream(new Enumeration<>() {
            @Override
            public boolean hasMoreElements() {
                return parts.hasNext();
            }

            @Override
            public InputStream nextElement() {
                return parts.next().get();
            }
        });
    }

    /** The backup of the checkpoint in {@code checkpoint}, described by {@code header} (whose state length must be the archive's). */
    public static InputStream open(BackupHeader header, CheckpointArchive checkpoint) {
        if (header.stateBytes() != checkpoint.bytes() || header.format() != BackupHeader.FORMAT_VERSION) {
            throw new IllegalArgumentException("the header announces " + header.stateBytes() + " bytes of format "
                    + header.format() + "; the checkpoint's archive has " + checkpoint.bytes());
        }
        return open(header, checkpoint.open());
    }

    /**
     * A backup taken in: its bytes are verified as they arrive and its state written into a store directory.
     *
     * @param sha256 the SHA-256 of the whole backup, as {@code sha256sum} prints it
     */
    public record Received(BackupHeader header, TermIndex position, String sha256) {
    }

    /** Verifies {@code backup} and writes its state into the store directory {@code target} (which must not exist). */
    public static Received unpack(Path backup, Path target, RocksKeyValueStore.Settings settings) throws IOException {
        if (!Files.isRegularFile(backup)) {
            throw new InvalidBackupException("no backup file at " + backup);
        }
        try (Receiver receiver = new Receiver(target, backup.toString(), settings);
             InputStream in = Files.newInputStream(backup)) {
            byte[] buffer = new byte[1 << 16];
            int n;
            while ((n = in.read(buffer)) > 0) {
                receiver.accept(buffer, 0, n);
            }
            return receiver.finish();
        }
    }

    /**
     * Takes a backup in, in pieces, in one pass: checks it ({@link BackupCheck}) and writes its state into
     * {@code target} as it comes, then, when {@link #finish} has found it whole and intact, checks that
     * the store it made holds the entry the header names. Until then nothing in {@code target} is to be
     * trusted; {@link #close} without a finish deletes it. Not thread-safe.
     */
    public static final class Receiver implements AutoCloseable {
        private final Path target;
        private final String source;
        private final RocksKeyValueStore.Settings settings;
        private final BackupCheck check;
        private long position;
        private CheckpointArchive.Unpacker archive;
        private Path snapshot;
        private OutputStream snapshotOut;
        private boolean finished;

        public Receiver(Path target, String source, RocksKeyValueStore.Settings settings) {
            this.target = target;
            this.source = source;
            this.settings = settings;
            this.check = new BackupCheck(source);
        }

        public void accept(byte[] bytes, int offset, int length) throws IOException {
            check.accept(bytes, offset, length);
            BackupHeader header = check.header();
            if (header != null) {
                // A piece holds state only once it holds the whole header, so no state byte is skipped.
                long from = Math.max(position, header.encodedBytes());
                long to = Math.min(position + length, header.encodedBytes() + header.stateBytes());
                if (from < to) {
                    state(header).write(bytes, (int) (offset + from - position), (int) (to - from));
                }
            }
            position += length;
        }

        /** Where the state goes: the archive's files into {@code target}, or a heap snapshot into a file beside it. */
        private Sink state(BackupHeader header) throws IOException {
            if (header.format() == BackupHeader.FORMAT_VERSION) {
                if (archive == null) {
                    archive = new CheckpointArchive.Unpacker(target, source);
                }
                return archive::accept;
            }
            if (snapshotOut == null) {
                snapshot = target.resolveSibling(target.getFileName() + ".snapshot");
                Files.deleteIfExists(snapshot);
                snapshotOut = new java.io.BufferedOutputStream(Files.newOutputStream(snapshot), 1 << 16);
            }
            return snapshotOut::write;
        }

        private interface Sink {
            void write(byte[] bytes, int offset, int length) throws IOException;
        }

        /**
         * After the last bytes: the backup, when it is whole, intact and its state that of the entry its
         * header names.
         *
         * @throws InvalidBackupException naming the source and what is wrong with it
         */
        public Received finish() throws IOException {
            BackupCheck.Verified verified = check.finish();
            BackupHeader header = verified.header();
            if (header.format() == BackupHeader.FORMAT_VERSION) {
                if (archive == null) {
                    archive = new CheckpointArchive.Unpacker(target, source); // an empty archive is still one
                }
                archive.finish();
            } else {
                snapshotOut.close();
                snapshotOut = null;
                importSnapshot(header);
            }
            TermIndex at;
            try {
                at = RatchetStateMachine.positionOf(target);
            } catch (IOException e) {
                throw new InvalidBackupException(source + " is intact but its state cannot be read: " + e.getMessage(), e);
            }
            if (at.getIndex() != header.index()) {
                throw new InvalidBackupException(source + " is inconsistent: its state holds entry " + at.getIndex()
                        + ", not the index " + header.index() + " its header names");
            }
            finished = true;
            return new Received(header, at, verified.sha256());
        }

        /** A backup of a heap release: its snapshot file is read into a new store at the header's position. */
        private void importSnapshot(BackupHeader header) throws IOException {
            try (RocksKeyValueStore kv = RocksKeyValueStore.open(target, settings)) {
                CompareExchangeStore store = SnapshotFile.read(snapshot, kv, header.term(), header.index());
                if (store.lastEntryIndex() != header.index()) {
                    throw new InvalidBackupException(source + " is inconsistent: its state holds entry "
                            + store.lastEntryIndex() + ", above the index " + header.index() + " its header names");
                }
            } catch (StorageException e) {
                throw new IOException(e.getMessage(), e);
            } catch (IOException e) {
                if (e instanceof InvalidBackupException) {
                    throw e;
                }
                // Its digest matched, so this is a state this build cannot read, not a damaged file.
                throw new InvalidBackupException(source + " is intact but its state cannot be read: " + e.getMessage(), e);
            } finally {
                Files.deleteIfExists(snapshot);
            }
        }

        @Override
        public void close() throws IOException {
            if (archive != null) {
                archive.close();
            }
            if (snapshotOut != null) {
                snapshotOut.close();
            }
            if (snapshot != null) {
                Files.deleteIfExists(snapshot);
            }
            if (!finished) {
                Directories.delete(target);
            }
        }
    }
}
