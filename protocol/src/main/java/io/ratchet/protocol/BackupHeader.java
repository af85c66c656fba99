package io.ratchet.protocol;

import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.UUID;

/**
 * What a backup file holds, from its first bytes. The file is:
 *
 * <pre>
 *   magic "RCHB" (4 bytes), format version (1 byte),
 *   cluster name (4-byte length, UTF-8), source cluster id (16 bytes),
 *   term, index, taken-at (epoch ms), state length (8 bytes each),
 *   the state, of that many bytes,
 *   SHA-256 of everything before it (32 bytes).
 * </pre>
 *
 * The state is, in format 2, a checkpoint of the node's store as an archive of its files (the
 * statemachine's {@code CheckpointArchive}); in format 1 (the releases that held the state in the heap),
 * a snapshot file (the statemachine's {@code SnapshotFile} format). Both are read.
 *
 * Its own format, versioned apart from the snapshot inside it, so either can change without the other.
 * Read it with {@link BackupCheck}, which verifies the whole file.
 *
 * @param format     the backup's format: {@link #FORMAT_VERSION} for those this build writes
 * @param cluster    the name of the cluster it was taken from
 * @param clusterId  that cluster's id (its Raft group's), which a cluster restored from it must not take
 * @param term       the Raft term of the entry at {@code index}
 * @param index      the log index of the last entry the state holds: every write acknowledged before the
 *                   backup was asked for is at or below it
 * @param takenAt    when the node that wrote it began, by its clock (for people; nothing depends on it)
 * @param stateBytes the length of the state that follows the header
 */
public record BackupHeader(byte format, String cluster, UUID clusterId, long term, long index, long takenAt,
                           long stateBytes) {
    public static final int MAGIC = 0x52434842; // "RCHB"
    /** The state is a checkpoint archive. */
    public static final byte FORMAT_VERSION = 2;
    /** The state is a heap-format snapshot file: backups of the releases before the disk store. */
    public static final byte SNAPSHOT_FORMAT = 1;
    public static final String DIGEST = "SHA-256";
    public static final int DIGEST_BYTES = 32;
    /** A cluster's name is a short word; more means a damaged length. */
    static final int MAX_CLUSTER_BYTES = 1024;
    private static final int FIXED_BYTES = Integer.BYTES + 1 + Integer.BYTES + 2 * Long.BYTES + 4 * Long.BYTES;
    /** The longest a header can be: a reader that has this many bytes and cannot decode one has none. */
    public static final int MAX_BYTES = FIXED_BYTES + MAX_CLUSTER_BYTES;

    /** A header of the format this build writes. */
    public BackupHeader(String cluster, UUID clusterId, long term, long index, long takenAt, long stateBytes) {
        this(FORMAT_VERSION, cluster, clusterId, term, index, takenAt, stateBytes);
    }

    public BackupHeader {
        if (format != FORMAT_VERSION && format != SNAPSHOT_FORMAT) {
            throw new IllegalArgumentException("backup format " + format + " is none this build knows");
        }
        if (cluster.getBytes(StandardCharsets.UTF_8).length > MAX_CLUSTER_BYTES) {
            throw new IllegalArgumentException("a cluster name is at most " + MAX_CLUSTER_BYTES + " bytes");
        }
        if (term < 0 || index < 1 || stateBytes < 0) {
            throw new IllegalArgumentException("term " + term + ", index " + index + ", state length "
                    + stateBytes + ": a backup holds at least one entry");
        }
    }

    /** A new digest of the kind a backup ends with. */
    public static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance(DIGEST);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has " + DIGEST, e);
        }
    }

    /** The header's length on disk. */
    public int encodedBytes() {
        return FIXED_BYTES + cluster.getBytes(StandardCharsets.UTF_8).length;
    }

    /** The whole file's length: header, state and digest. */
    public long fileBytes() {
        return encodedBytes() + stateBytes + DIGEST_BYTES;
    }

    public byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(encodedBytes());
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(MAGIC);
            out.writeByte(format);
            byte[] name = cluster.getBytes(StandardCharsets.UTF_8);
            out.writeInt(name.length);
            out.write(name);
            out.writeLong(clusterId.getMostSignificantBits());
            out.writeLong(clusterId.getLeastSignificantBits());
            out.writeLong(term);
            out.writeLong(index);
            out.writeLong(takenAt);
            out.writeLong(stateBytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail
        }
        return bytes.toByteArray();
    }

    /**
     * Reads a header, naming what is wrong when it is not one this build reads.
     *
     * @throws java.io.EOFException when the bytes end inside it
     */
    static BackupHeader decode(DataInput in, String source) throws IOException {
        if (in.readInt() != MAGIC) {
            throw new InvalidBackupException(source + " is not a Ratchet backup: it does not begin with the backup magic");
        }
        byte version = in.readByte();
        if (version != FORMAT_VERSION && version != SNAPSHOT_FORMAT) {
            throw new InvalidBackupException(source + " has backup format " + version + "; this build reads "
                    + SNAPSHOT_FORMAT + " and " + FORMAT_VERSION + " (or the file is damaged)");
        }
        int nameBytes = in.readInt();
        if (nameBytes < 0 || nameBytes > MAX_CLUSTER_BYTES) {
            throw new InvalidBackupException(source + " is damaged: its cluster name is " + nameBytes + " bytes long");
        }
        byte[] name = new byte[nameBytes];
        in.readFully(name);
        UUID id = new UUID(in.readLong(), in.readLong());
        long term = in.readLong();
        long index = in.readLong();
        long takenAt = in.readLong();
        long stateBytes = in.readLong();
        if (term < 0 || index < 1 || stateBytes < 0) {
            throw new InvalidBackupException(source + " is damaged: its header says term " + term + ", index " + index
                    + ", state length " + stateBytes);
        }
        return new BackupHeader(version, new String(name, StandardCharsets.UTF_8), id, term, index, takenAt, stateBytes);
    }
}
