package io.ratchet.node;

import io.ratchet.statemachine.BackupFile;
import io.ratchet.statemachine.SnapshotFile;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.util.MD5FileUtil;

/**
 * Starts a new cluster from a backup, offline: writes into each of its nodes' empty storage what a node
 * that had taken a snapshot at the backup's index and purged its log would hold, under a new cluster id.
 * Started, the nodes load the snapshot and their log goes on at the index after it, so no index in the
 * backup is ever given out again.
 *
 * <p>Everything is checked before anything is written: the whole backup (header, length, SHA-256, and its
 * state parsed), that the nodes are of one cluster, and that their storage is empty. A node's
 * {@link ClusterIdentity} file is written last, so a node whose restore did not finish never starts as a
 * member of the restored cluster with part of its state.
 */
final class ClusterRestore {
    /**
     * A checked restore, ready to write.
     *
     * @param clusterId the new cluster's id
     * @param given     whether the operator gave it (to restore the cluster's other nodes elsewhere)
     */
    record Plan(BackupFile.Contents backup, List<NodeConfig> nodes, RaftGroupId clusterId, boolean given) {
    }

    private ClusterRestore() {
    }

    /**
     * Checks {@code backup} and the nodes' storage, and chooses the new cluster id ({@code clusterId}, or a
     * random one when null). Writes nothing.
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
        BackupFile.Contents contents = BackupFile.read(backup);
        UUID source = contents.header().clusterId();
        if (source.equals(clusterId)) {
            throw new IllegalArgumentException("cluster id " + clusterId + " is the id of the cluster the backup was "
                    + "taken from; a restored cluster takes a new one, so that the two can never mix");
        }
        RaftGroupId id = clusterId != null ? RaftGroupId.valueOf(clusterId) : RaftGroupId.randomId();
        return new Plan(contents, List.copyOf(nodes), id, clusterId != null);
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
        long term = plan.backup().header().term();
        long index = plan.backup().header().index();
        Files.createDirectories(node.storage());
        RaftProperties properties = RatchetNode.properties(node);
        // Ratis lays out a group's storage: current/ (its metadata and log) and sm/ (the state machine's).
        RaftStorage storage = RaftStorage.newBuilder()
                .setDirectory(node.storage().resolve(plan.clusterId().getUuid().toString()).toFile())
                .setOption(RaftStorage.StartupOption.FORMAT)
                .setStorageFreeSpaceMin(RaftServerConfigKeys.storageFreeSpaceMin(properties))
                .setLogCorruptionPolicy(RaftServerConfigKeys.Log.corruptionPolicy(properties))
                .build();
        try {
            storage.initialize();
            // The term the backup's last entry has: the first leader's term is above it, as entries' terms must
            // never go down along the log. No vote cast in it.
            storage.getMetadataFile().persist(RaftStorageMetadata.valueOf(term, RaftPeerId.valueOf("")));
            // After the format, which empties sm/. Named as the state machine names its snapshots, with the
            // MD5 side file that tells Ratis the snapshot is complete.
            File snapshot = new File(storage.getStorageDir().getStateMachineDir(),
                    SimpleStateMachineStorage.getSnapshotFileName(term, index));
            SnapshotFile.write(plan.backup().state(), snapshot.toPath());
            MD5FileUtil.saveMD5File(snapshot, MD5FileUtil.computeMd5ForFile(snapshot));
        } finally {
            storage.close();
        }
        ClusterIdentity.write(node.storage(), plan.clusterId());
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
            if (!node.peers().equals(first.peers()) || !node.group().equals(first.group())) {
                throw new IllegalArgumentException("nodes " + first.id() + " and " + node.id() + " are configured with "
                        + "different peers or cluster names: a restore is into the nodes of one cluster");
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
