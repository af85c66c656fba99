package io.ratchet.statemachine;

import io.ratchet.protocol.BackupCheck;
import io.ratchet.protocol.BackupHeader;
import io.ratchet.protocol.InvalidBackupException;
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

/**
 * A backup file ({@link BackupHeader} has the layout): a header, a snapshot file of the whole state, and a
 * SHA-256 of everything before it. Written by a node from a snapshot of its state; read back, verified
 * whole and parsed, before anything is restored from it.
 */
public final class BackupFile {
    /**
     * A verified backup.
     *
     * @param sha256 the SHA-256 of the whole file, as {@code sha256sum} prints it
     */
    public record Contents(BackupHeader header, CompareExchangeStore state, String sha256) {
    }

    private BackupFile() {
    }

    /**
     * The bytes of the backup of the snapshot file {@code state}, made as they are read: the header, the
     * snapshot, then the digest of both. Nothing is copied to disk; the caller closes the stream.
     */
    public static InputStream open(BackupHeader header, Path state) throws IOException {
        long size = Files.size(state);
        if (size != header.stateBytes()) {
            throw new IllegalArgumentException("the header announces " + header.stateBytes() + " bytes of state; "
                    + state + " has " + size);
        }
        MessageDigest digest = BackupHeader.newDigest();
        InputStream body = new DigestInputStream(new SequenceInputStream(new ByteArrayInputStream(header.encode()),
                Files.newInputStream(state)), digest);
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

    /**
     * Reads a backup: its header, length and digest are verified over the whole file, and its state is
     * parsed whole, so a truncated, damaged or unreadable file is refused before anything is done with it.
     * The state passes through a temporary file (the snapshot reader reads files), deleted before this returns.
     *
     * @throws InvalidBackupException naming the file and what is wrong with it
     */
    public static Contents read(Path backup) throws IOException {
        Path state = Files.createTempFile("ratchet-backup-", ".snapshot");
        try {
            BackupCheck.Verified verified = copyState(backup, state);
            BackupHeader header = verified.header();
            CompareExchangeStore store;
            try {
                store = SnapshotFile.read(state);
            } catch (IOException e) {
                // Its digest matched, so this is a state this build cannot read, not a damaged file.
                throw new InvalidBackupException(backup + " is intact but its state cannot be read: " + e.getMessage(), e);
            }
            if (store.lastEntryIndex() > header.index()) {
                throw new InvalidBackupException(backup + " is inconsistent: its state holds entry "
                        + store.lastEntryIndex() + ", above the index " + header.index() + " its header names");
            }
            return new Contents(header, store, verified.sha256());
        } finally {
            Files.deleteIfExists(state);
        }
    }

    /** Verifies {@code backup} in one pass, copying the bytes between its header and its digest to {@code state}. */
    private static BackupCheck.Verified copyState(Path backup, Path state) throws IOException {
        BackupCheck check = new BackupCheck(backup.toString());
        try (InputStream in = Files.newInputStream(backup); OutputStream out = Files.newOutputStream(state)) {
            byte[] buffer = new byte[1 << 16];
            long position = 0;
            int n;
            while ((n = in.read(buffer)) > 0) {
                check.accept(buffer, 0, n);
                BackupHeader header = check.header();
                if (header != null) {
                    // A piece holds state only once it holds the whole header, so no state byte is skipped.
                    long from = Math.max(position, header.encodedBytes());
                    long to = Math.min(position + n, header.encodedBytes() + header.stateBytes());
                    if (from < to) {
                        out.write(buffer, (int) (from - position), (int) (to - from));
                    }
                }
                position += n;
            }
        }
        return check.finish();
    }
}
