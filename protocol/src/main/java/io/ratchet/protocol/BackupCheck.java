package io.ratchet.protocol;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * Verifies a backup file ({@link BackupHeader}) as its bytes go by, in one pass and in any pieces: as it
 * arrives from a node, or as it is read from disk. {@link #finish} says whether it was whole and intact.
 * Not thread-safe: one reader feeds it.
 */
public final class BackupCheck {
    /** Verified bytes: the header, and the SHA-256 of the whole file (what {@code sha256sum} prints). */
    public record Verified(BackupHeader header, long bytes, String sha256) {
    }

    private final String source;
    /** Everything before the trailer: what the trailer must equal. */
    private final MessageDigest content = BackupHeader.newDigest();
    private final MessageDigest whole = BackupHeader.newDigest();
    private final byte[] trailer = new byte[BackupHeader.DIGEST_BYTES];
    /** The bytes so far while the header is incomplete; null once it is read. */
    private ByteArrayOutputStream head = new ByteArrayOutputStream();
    private BackupHeader header;
    private long received;

    /** @param source what the bytes are, for messages: "backup.rbk", "the backup node n2 sent" */
    public BackupCheck(String source) {
        this.source = source;
    }

    /** Takes the next bytes; fails as soon as they cannot be a backup (a bad header, more bytes than it announces). */
    public void accept(byte[] bytes, int offset, int length) throws InvalidBackupException {
        whole.update(bytes, offset, length);
        if (header != null) {
            place(bytes, offset, length);
            return;
        }
        head.write(bytes, offset, length);
        byte[] sofar = head.toByteArray();
        header = decode(sofar);
        if (header != null) {
            head = null;
            place(sofar, 0, sofar.length);
        }
    }

    /** The header, once its bytes have arrived (verified only by {@link #finish}); else null. */
    public BackupHeader header() {
        return header;
    }

    /** After the last bytes: the file, when it is whole and its digest matches. */
    public Verified finish() throws InvalidBackupException {
        if (header == null) {
            throw new InvalidBackupException(source + " is truncated: " + received() + " bytes, fewer than a backup's header");
        }
        if (received < header.fileBytes()) {
            throw new InvalidBackupException(source + " is truncated (or its header damaged): it holds " + received
                    + " of the " + header.fileBytes() + " bytes its header announces");
        }
        if (!MessageDigest.isEqual(content.digest(), trailer)) {
            throw new InvalidBackupException(source + " is corrupt: the SHA-256 at its end does not match its content");
        }
        return new Verified(header, received, HexFormat.of().formatHex(whole.digest()));
    }

    private long received() {
        return header == null ? head.size() : received;
    }

    /** The header from the first bytes, or null when more are needed. */
    private BackupHeader decode(byte[] sofar) throws InvalidBackupException {
        try {
            return BackupHeader.decode(new DataInputStream(new ByteArrayInputStream(sofar)), source);
        } catch (EOFException more) {
            if (sofar.length >= BackupHeader.MAX_BYTES) {
                throw new InvalidBackupException(source + " is damaged: no header in its first " + sofar.length + " bytes");
            }
            return null;
        } catch (InvalidBackupException e) {
            throw e;
        } catch (IOException e) {
            throw new IllegalStateException("a byte array does not fail", e);
        }
    }

    /** Bytes at {@code received..}: into the content digest, or (the last 32 of the file) into the trailer. */
    private void place(byte[] bytes, int offset, int length) throws InvalidBackupException {
        long end = header.fileBytes();
        if (received + length > end) {
            throw new InvalidBackupException(source + " is damaged: it goes on past the " + end
                    + " bytes its header announces");
        }
        long contentEnd = end - BackupHeader.DIGEST_BYTES;
        int toContent = (int) Math.max(0, Math.min(length, contentEnd - received));
        content.update(bytes, offset, toContent);
        for (int i = toContent; i < length; i++) {
            trailer[(int) (received + i - contentEnd)] = bytes[offset + i];
        }
        received += length;
    }
}
