package io.ratchet.node;

import io.ratchet.client.backup.Backups;
import io.ratchet.protocol.Groups;
import io.ratchet.statemachine.BackupFile;
import io.ratchet.statemachine.CompareExchangeStore;
import io.ratchet.statemachine.Directories;
import io.ratchet.statemachine.RatchetStateMachine;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.server.storage.RaftStorageMetadata;

/**
 * Starts a new cluster from a backup, offline: writes into each of its nodes' empty storage what a node
 * whose store holds the backup's state would hold, under a new cluster id. Started, the nodes open that
 * store and their log goes on at the index after it, so no index in the backup is ever given out again.
 *
 * <p>Everything is checked before anything is written into a node's storage: the whole backup (header,
 * length, SHA-256, and its state opened as a store holding the entry its header names), that the nodes
 * are of one cluster, and that their storage is empty. The state is unpacked once, in the nearest
 * directory above the first node's storage that exists (the temporary directory for a check alone), and
 * never held in memory; each node
 * gets hard links to its immutable files where the file system allows, copies otherwise. A node's
 * {@link ClusterIdentity} file is written last, so a node whose restore did not finish never starts as a
 * member of the restored cluster with part of its state.
 *
 * <p>A cluster of several groups ({@code groups} in the nodes' configuration) is restored from every
 * group's file ({@link Backups#groupFile}: group 0's is the one named), each checked to be that group of
 * the cluster group 0's file came from; each node gets every group's state under the new cluster's group
 * ids, and its {@code cluster.groups}.
 */
final class ClusterRestore {
    /**
     * A checked restore, ready to write; closing it deletes the unpacked state.
     *
     * @param backups   each group's backup, verified, in group order (one for a cluster of one group)
     * @param staged    each group's state, unpacked into a store directory, in group order
     * @param items     how many items they hold
     * @param clusterId the new cluster's id
     * @param given     whether the operator gave it (to restore the cluster's other nodes elsewhere)
     */
    record Plan(List<BackupFile.Received> backups, List<Path> staged, long items, List<NodeConfig> nodes,
                RaftGroupId clusterId, boolean given) implements AutoCloseable {
        /** Group 0's backup: the one named, whose header names the cluster. */
        BackupFile.Received backup() {
            return backups.get(0);
        }

        /** Where the state is unpacked. */
        Path stagingDir() {
            return staged.get(0).getParent();
        }

        @Override
        public void close() throws IOException {
            Directories.delete(stagingDir());
        }
    }

    private ClusterRestore() {
    }

    /**
     * Checks {@code backup} and the nodes' storage, unpacks the state, and chooses the new cluster id
     * ({@code clusterId}, or a random one when null). Writes nothing into the nodes' storage.
     *
     * @throws IllegalArgumentException when the nodes are not of one cluster, a storage is not empty, or
     *                                  the id is the backup's own
     * @throws io.ratchet.protocol.InvalidBackupException when the file is not a whole, intact backup
     */
    static Plan plan(Path backup, List<NodeConfig> nodes, UUID clusterId) throws IOException {
        checkOneCluster(nodes);
        for (NodeConfig node : nodes) {
            checkEmpty(node);
        }
        if (!Files.isRegularFile(backup)) {
            throw new IllegalArgumentException("no backup file at " + backup);
        }
        int groups = groupsOf(backup, nodes);
        Path staging = nodes.isEmpty() ? Files.createTempDirectory("ratchet-restore-")
                : Files.createTempDirectory(parentOf(nodes.get(0).storage()), ".ratchet-restore-");
        try {
            List<BackupFile.Received> received = new ArrayList<>();
            List<Path> staged = new ArrayList<>();
            long items = 0;
            List<RaftGroupId> sourceGroups = null;
            for (int g = 0; g < groups; g++) {
                Path file = Backups.groupFile(backup, g);
                if (!Files.isRegularFile(file)) {
                    throw new IllegalArgumentException("no backup of group " + g + " at " + file + ": a cluster of " + groups
                            + " groups is restored from every group's file, saved beside the one named");
                }
                Path dir = staging.resolve("db" + (g == 0 ? "" : "-g" + g));
                BackupFile.Received one = BackupFile.unpack(file, dir,
                        nodes.isEmpty() ? RocksKeyValueStore.Settings.DEFAULT : nodes.get(0).store().dividedAmong(groups));
                if (g == 0) {
                    sourceGroups = Groups.ids(RaftGroupId.valueOf(one.header().clusterId()), groups);
                } else if (!one.header().clusterId().equals(sourceGroups.get(g).getUuid())) {
                    throw new IllegalArgumentException(file + " is not group " + g + " of the cluster " + backup
                            + " was taken from (its id is " + one.header().clusterId() + ")");
                }
                try (RocksKeyValueStore kv = RocksKeyValueStore.openReadOnly(dir)) {
                    items += new CompareExchangeStore(kv).size();
                }
                received.add(one);
                staged.add(dir);
            }
            UUID source = received.get(0).header().clusterId();
            if (source.equals(clusterId)) {
                throw new IllegalArgumentException("cluster id " + clusterId + " is the id of the cluster the backup was "
                        + "taken from; a restored cluster takes a new one, so that the two can never mix");
            }
            RaftGroupId id = clusterId != null ? RaftGroupId.valueOf(clusterId) : RaftGroupId.randomId();
            return new Plan(List.copyOf(received), List.copyOf(staged), items, List.copyOf(nodes), id, clusterId != null);
        } catch (IOException | RuntimeException e) {
            Directories.delete(staging);
            throw e;
        }
    }

    /**
     * How many groups the restore is of: what the nodes' configuration says; for a check alone (no nodes),
     * as many as there are group files beside the one named. A file of a group beyond the configured
     * count means the backup is of a cluster of more groups: refused, since a restore into fewer would
     * leave its keys out.
     */
    private static int groupsOf(Path backup, List<NodeConfig> nodes) {
        int groups;
        if (nodes.isEmpty()) {
            groups = 1;
            while (Files.isRegularFile(Backups.groupFile(backup, groups))) {
                groups++;
            }
        } else {
            groups = nodes.get(0).groups();
        }
        if (Files.isRegularFile(Backups.groupFile(backup, groups))) {
            throw new IllegalArgumentException("there is a backup of group " + groups + " beside " + backup
                    + ", and the nodes are configured with " + groups + " group" + (groups == 1 ? "" : "s")
                    + ": set groups in their configuration to the backed-up cluster's count");
        }
        return groups;
    }

    /** The nearest directory above {@code storage} that exists: staging there makes no directory that stays. */
    private static Path parentOf(Path storage) {
        Path p = storage.toAbsolutePath().getParent();
        while (p != null && !Files.isDirectory(p)) {
            p = p.getParent();
        }
        return p;
    }

    /**
     * Writes the plan into each node's storage.
     *
     * @throws IOException when a storage cannot be written; the message names it, which must be emptied
     *                     before the restore is run again
     */
    static void write(Plan plan) throws IOException {
        for (NodeConfig node : plan.nodes()) {
            try {
                writeNode(node, plan);
            } catch (IOException | RuntimeException e) {
                throw new IOException("restoring node " + node.id() + " into " + node.storage() + " failed (" + e
                        + "); empty that directory and run the restore again", e);
            }
        }
    }

    private static void writeNode(NodeConfig node, Plan plan) throws IOException {
        Files.createDirectories(node.storage());
        List<RaftGroupId> ids = Groups.ids(plan.clusterId(), plan.backups().size());
        for (int g = 0; g < ids.size(); g++) {
            writeGroup(node, ids.get(g), plan.backups().get(g).header().term(), plan.staged().get(g));
        }
        if (ids.size() > 1) {
            ClusterIdentity.writeGroups(node.storage(), ids.size());
        }
        ClusterIdentity.write(node.storage(), plan.clusterId());
    }

    /** One group's storage on one node: Raft's metadata at the backup's term, and the group's store. */
    private static void writeGroup(NodeConfig node, RaftGroupId group, long term, Path staged) throws IOException {
        RaftProperties properties = RatchetNode.properties(node);
        // Ratis lays out a group's storage: current/ (its metadata and log) and sm/ (the state machine's).
        RaftStorage storage = RaftStorage.newBuilder()
                .setDirectory(node.storage().resolve(group.getUuid().toString()).toFile())
                .setOption(RaftStorage.StartupOption.FORMAT)
                .setStorageFreeSpaceMin(RaftServerConfigKeys.storageFreeSpaceMin(properties))
                .setLogCorruptionPolicy(RaftServerConfigKeys.Log.corruptionPolicy(properties))
                .build();
        try {
            storage.initialize();
            // The term the backup's last entry has: the first leader's term is above it, as entries' terms must
            // never go down along the log. No vote cast in it.
            storage.getMetadataFile().persist(RaftStorageMetadata.valueOf(term, RaftPeerId.valueOf("")));
            // After the format, which empties sm/: the store the state machine opens there.
            copyStore(staged, storage.getStorageDir().getStateMachineDir().toPath().resolve(RatchetStateMachine.DB));
        } finally {
            storage.close();
        }
    }

    /**
     * A store's files into {@code target}: its table files, which the store never changes once written,
     * as hard links where the file system allows; the rest (the manifest, which the store appends to) as
     * copies, so that no two nodes ever share a file that changes.
     */
    private static void copyStore(Path source, Path target) throws IOException {
        Files.createDirectory(target);
        try (Stream<Path> files = Files.list(source)) {
            for (Path f : files.toList()) {
                Path to = target.resolve(f.getFileName());
                boolean linked = false;
                if (f.getFileName().toString().endsWith(".sst")) {
                    try {
                        Files.createLink(to, f);
                        linked = true;
                    } catch (IOException | UnsupportedOperationException e) {
                        // Another file system: copied below.
                    }
                }
                if (!linked) {
                    Files.copy(f, to);
                    try (FileChannel channel = FileChannel.open(to, StandardOpenOption.WRITE)) {
                        channel.force(true);
                    }
                }
            }
        }
        Directories.sync(target);
    }

    /** One cluster: the same name and peers in every conf, each a different node with its own storage. */
    private static void checkOneCluster(List<NodeConfig> nodes) {
        if (nodes.isEmpty()) {
            return;
        }
        NodeConfig first = nodes.get(0);
        Set<String> ids = new HashSet<>();
        Set<Path> storages = new HashSet<>();
        for (NodeConfig node : nodes) {
            if (!node.peers().equals(first.peers()) || !node.group().equals(first.group()) || node.groups() != first.groups()) {
                throw new IllegalArgumentException("nodes " + first.id() + " and " + node.id() + " are configured with "
                        + "different peers, cluster names or groups: a restore is into the nodes of one cluster");
            }
            if (!ids.add(node.id())) {
                throw new IllegalArgumentException("node " + node.id() + " is named twice");
            }
            if (!storages.add(node.storage().toAbsolutePath().normalize())) {
                throw new IllegalArgumentException("two nodes have the storage " + node.storage());
            }
        }
    }

    private static void checkEmpty(NodeConfig node) throws IOException {
        Path storage = node.storage();
        if (!Files.exists(storage)) {
            return;
        }
        if (!Files.isDirectory(storage)) {
            throw new IllegalArgumentException("node " + node.id() + "'s storage " + storage + " is not a directory");
        }
        try (Stream<Path> entries = Files.list(storage)) {
            if (entries.findAny().isPresent()) {
                throw new IllegalArgumentException("node " + node.id() + "'s storage " + storage + " is not empty: a "
                        + "restore starts a new cluster in empty storage (stop the node and empty it, or give another)");
            }
        }
    }
}
