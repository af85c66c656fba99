package io.ratchet.node;

import io.ratchet.protocol.GroupName;
import io.ratchet.protocol.Groups;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.UUID;
import org.apache.ratis.protocol.RaftGroupId;

/**
 * Which cluster a node's storage belongs to: the Raft group id, kept in {@code cluster.id} at the root of
 * its storage. Every Ratis message carries the group id and a node refuses any other, so two clusters
 * with different ids can never mix, even when their nodes are given each other's addresses.
 *
 * <p>A cluster formed from scratch takes the id derived from its name ({@link GroupName}), which is what
 * clusters had before the file existed, so their storage keeps working; the file is written at the first
 * start. A cluster restored from a backup gets a new id (see {@code ratchet restore}), written into each
 * of its nodes' storage before they start: the restored cluster and the one the backup came from cannot
 * take each other's messages.
 */
public final class ClusterIdentity {
    public static final String FILE = "cluster.id";
    /** How many Raft groups the cluster has ({@link Groups}), beside {@link #FILE}; absent means one. */
    public static final String GROUPS_FILE = "cluster.groups";

    private ClusterIdentity() {
    }

    /** The id in {@code storage}'s file, or (first start) the one derived from the cluster's name, recorded there. */
    public static RaftGroupId resolve(Path storage, String clusterName) throws IOException {
        RaftGroupId recorded = read(storage);
        if (recorded != null) {
            return recorded;
        }
        RaftGroupId derived = GroupName.toGroupId(clusterName);
        write(storage, derived);
        return derived;
    }

    /** The id recorded in {@code storage}, or null when none is. */
    public static RaftGroupId read(Path storage) throws IOException {
        Path file = storage.resolve(FILE);
        if (!Files.exists(file)) {
            return null;
        }
        String text = Files.readString(file, StandardCharsets.UTF_8).trim();
        try {
            return RaftGroupId.valueOf(UUID.fromString(text));
        } catch (IllegalArgumentException e) {
            throw new IOException(file + " does not hold a cluster id (a UUID): '" + text + "'");
        }
    }

    /**
     * Records {@code id} in {@code storage}, durably and atomically: synced before the rename, so a crash
     * leaves the old file or the whole new one, never an empty one.
     */
    public static void write(Path storage, RaftGroupId id) throws IOException {
        writeDurably(storage, FILE, id.getUuid().toString());
    }

    private static void writeDurably(Path storage, String name, String line) throws IOException {
        Files.createDirectories(storage);
        Path tmp = storage.resolve(name + ".tmp");
        try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            out.write(ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8)));
            out.force(true);
        }
        Files.move(tmp, storage.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * The cluster's groups, by id, in group order: {@code configured} of them, recorded in {@code storage}
     * at the first start. The count is fixed when a cluster is formed (a key's group depends on it), so a
     * node whose configuration says otherwise than its storage does not start. Storage of a release before
     * groups, which records none, holds one group.
     */
    public static List<RaftGroupId> resolveGroups(Path storage, RaftGroupId first, int configured) throws IOException {
        Path file = storage.resolve(GROUPS_FILE);
        int recorded;
        if (Files.exists(file)) {
            String text = Files.readString(file, StandardCharsets.UTF_8).trim();
            try {
                recorded = Groups.validCount(Integer.parseInt(text));
            } catch (IllegalArgumentException e) {
                throw new IOException(file + " does not hold a group count (1.." + Groups.MAX + "): '" + text + "'");
            }
        } else if (hasRaftState(storage, first)) {
            recorded = 1;
        } else {
            writeDurably(storage, GROUPS_FILE, Integer.toString(configured));
            recorded = configured;
        }
        if (recorded != configured) {
            throw new IllegalStateException("its storage, " + storage + ", holds a cluster of " + recorded + " group"
                    + (recorded == 1 ? "" : "s") + ", and its configuration says groups = " + configured
                    + ": the number of groups is fixed when a cluster is formed");
        }
        return Groups.ids(first, recorded);
    }

    /** Records how many groups the cluster in {@code storage} has (a restore writes it before the cluster's id). */
    public static void writeGroups(Path storage, int count) throws IOException {
        writeDurably(storage, GROUPS_FILE, Integer.toString(Groups.validCount(count)));
    }

    /** Whether {@code storage} already holds this group's Raft state (a node that has been a member). */
    static boolean hasRaftState(Path storage, RaftGroupId id) {
        return Files.exists(storage.resolve(id.getUuid().toString()).resolve("current").resolve("raft-meta"));
    }
}
