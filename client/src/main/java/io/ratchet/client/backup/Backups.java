package io.ratchet.client.backup;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterAdmin;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.common.NodeChannels;
import io.ratchet.client.AuthenticationException;
import io.ratchet.client.NodeStatus;
import io.ratchet.client.PermissionDeniedException;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.BackupCheck;
import io.ratchet.protocol.BackupHeader;
import io.ratchet.protocol.BackupRpc;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.InvalidBackupException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;

/**
 * Backups of a running cluster's whole state (items, documents, client sessions, remembered idempotent
 * results, the quota and cluster time), taken without stopping writes ({@link BackupRpc}).
 *
 * <pre>{@code
 * SavedBackup b = Backups.save(ClientOptions.parse("n1=10.0.0.1:7001,n2=10.0.0.2:7001"), Path.of("ratchet.rbk"));
 * }</pre>
 *
 * A backup holds every write acknowledged before {@code save} was called, at the index it reports, and
 * nothing above that index. Restore one into a new cluster with {@code ratchet restore}.
 *
 * <p>A cluster of several Raft groups ({@link io.ratchet.protocol.Groups}) is backed up one group after
 * another, each to a file of its own: group 0's to the file named, group g's beside it ({@link #groupFile}).
 * Each group's file holds every write of that group acknowledged before that group's part began; the
 * groups' parts are taken one after another, not at one instant (no request spans groups, so no write
 * is split between them). A restore needs every group's file.
 */
public final class Backups {
    private Backups() {
    }

    /**
     * Saves a backup to {@code target}, written by the first node that serves one: followers first, each
     * in the order of their ids, then the leader (apply pauses on the node that writes the state, and on
     * the leader that delays the answers to writes). To choose the node, give options with that node
     * alone. The bytes are verified as they arrive
     * and written to {@code target.tmp}, which is synced and renamed to {@code target} only once the whole
     * file is in and its SHA-256 matches: {@code target} is never a partial backup, and an older file there
     * stays until a whole new one replaces it. Each node's attempt may take the options' operation timeout.
     *
     * @throws IllegalArgumentException    when {@code target}'s directory does not exist, or it is a directory
     * @throws ClusterUnavailableException when no node served a whole backup (each node's reason in the message)
     * @throws IOException                 when {@code target} cannot be written
     */
    public static SavedBackup save(ClientOptions options, Path target) throws IOException {
        return saveGroups(options, target).get(0);
    }

    /** Where group {@code group}'s backup goes beside {@code target}, group 0's: {@code target.gN} (N ≥ 1). */
    public static Path groupFile(Path target, int group) {
        return group == 0 ? target : target.resolveSibling(target.getFileName() + ".g" + group);
    }

    /**
     * As {@link #save}, returning every group's backup, in group order (one for a cluster of one group). A
     * file of a group the cluster does not have is left as it is.
     */
    public static List<SavedBackup> saveGroups(ClientOptions options, Path target) throws IOException {
        Path parent = target.toAbsolutePath().getParent();
        if (!Files.isDirectory(parent)) {
            throw new IllegalArgumentException("cannot save a backup to " + target + ": " + parent + " is not a directory");
        }
        if (Files.isDirectory(target)) {
            throw new IllegalArgumentException("cannot save a backup to " + target + ": it is a directory");
        }
        List<NodeStatus> status = status(options);
        int groups = status.stream().mapToInt(s -> s.groups().size()).max().orElse(0);
        if (groups <= 1) {
            return List.of(saveGroup(options, status, 0, target));
        }
        // One cut across groups: every decision to commit a transaction across groups is held from before the
        // first checkpoint to after the last, and each checkpoint holds every write acknowledged before it was
        // asked for (its barrier). So a transaction committed in one file is prepared or settled in every
        // other, and one not committed is committed in none: a restore settles or aborts it whole.
        try (RatchetClient client = RatchetClient.connect(options); CutHold hold = new CutHold(client)) {
            List<SavedBackup> saved = new ArrayList<>();
            for (int g = 0; g < groups; g++) {
                saved.add(saveGroup(options, status, g, groupFile(target, g)));
            }
            hold.checkUnbroken();
            return List.copyOf(saved);
        }
    }

    /**
     * The hold on commits across groups for one backup: set before the first checkpoint, renewed every third
     * of {@link #CUT_FENCE} while the checkpoints are made (so it lapses by itself soon after a backup that
     * dies), lifted after the last. A renewal that does not land in time breaks the cut, and the backup fails.
     */
    private static final class CutHold implements AutoCloseable {
        private final RatchetClient client;
        private final ScheduledExecutorService renewing;
        /** When the last renewal was asked for, by this process' clock (it landed later, so the hold lasts past it). */
        private volatile long lastAskedNanos;
        private volatile String broken;

        CutHold(RatchetClient client) {
            this.client = client;
            lastAskedNanos = System.nanoTime();
            RatchetClient.await(client.fenceAsync(CUT_FENCE));
            renewing = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-backup-cut"));
            long every = CUT_FENCE.toMillis() / 3;
            renewing.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
        }

        private void renew() {
            long asked = System.nanoTime();
            try {
                RatchetClient.await(client.fenceAsync(CUT_FENCE));
                long landed = System.nanoTime() - lastAskedNanos;
                if (landed > CUT_FENCE.toNanos() * 9 / 10 && broken == null) {
                    broken = "the hold on commits was renewed only after " + landed / 1_000_000 + " ms";
                }
                lastAskedNanos = asked;
            } catch (RuntimeException e) {
                // The next renewal may still land in time; checkUnbroken judges by when the last one did.
            }
        }

        void checkUnbroken() {
            long since = System.nanoTime() - lastAskedNanos;
            String why = broken != null ? broken : since > CUT_FENCE.toNanos() * 9 / 10
                    ? "the hold on commits was last renewed " + since / 1_000_000 + " ms ago" : null;
            if (why != null) {
                throw new ClusterUnavailableException("the backup of several groups may not be one consistent cut (" + why
                        + ", past its " + CUT_FENCE.toMillis() + " ms); nothing is wrong with the cluster: take it again", null);
            }
        }

        @Override
        public void close() {
            renewing.shutdownNow();
            try {
                renewing.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            // Lapses by itself if this does not land.
            client.fenceAsync(Duration.ZERO).exceptionally(e -> null).join();
        }
    }

    /**
     * How long one renewal of the cut's hold lasts in cluster time; renewed every third of it while the
     * checkpoints are made, lifted after the last.
     */
    static final Duration CUT_FENCE = Duration.ofSeconds(Command.Fence.MAX_MILLIS / 1000);

    private static List<NodeStatus> status(ClientOptions options) {
        try (ClusterAdmin admin = ClusterAdmin.connect(options)) {
            return admin.status();
        }
    }

    private static SavedBackup saveGroup(ClientOptions options, List<NodeStatus> status, int group, Path target)
            throws IOException {
        Path partial = target.resolveSibling(target.getFileName() + ".tmp");
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, String> node : followersFirst(options, status, group)) {
            try {
                return saveFrom(node.getKey(), node.getValue(), options, group, partial, target);
            } catch (StatusRuntimeException e) {
                // Every node answers a caller the same: no use asking the next.
                if (e.getStatus().getCode() == Status.Code.UNAUTHENTICATED) {
                    throw new AuthenticationException(e.getStatus().getDescription());
                }
                if (e.getStatus().getCode() == Status.Code.PERMISSION_DENIED) {
                    throw new PermissionDeniedException(e.getStatus().getDescription());
                }
                failures.add(node.getKey() + ": " + describe(e.getStatus()));
            } catch (InvalidBackupException e) {
                failures.add(node.getKey() + ": " + e.getMessage());
            } finally {
                Files.deleteIfExists(partial);
            }
        }
        throw new ClusterUnavailableException("no node served a backup" + (group == 0 ? "" : " of group " + group)
                + " (" + String.join("; ", failures) + ")", null);
    }

    /**
     * The nodes by id, the group's leader last (as the nodes' own status calls tell; a node that does not
     * answer is no leader).
     */
    private static List<Map.Entry<String, String>> followersFirst(ClientOptions options, List<NodeStatus> status, int group) {
        List<Map.Entry<String, String>> byId = options.peers().entrySet().stream().sorted(Map.Entry.comparingByKey()).toList();
        if (byId.size() == 1) {
            return byId;
        }
        Set<String> leaders = status.stream().filter(s -> group == 0 ? "LEADER".equals(s.role())
                        : s.groups().size() > group && "LEADER".equals(s.groups().get(group).role()))
                .map(NodeStatus::address).collect(Collectors.toSet());
        // A stable sort: the ids' order stays among the followers.
        return byId.stream().sorted(Comparator.comparing(node -> leaders.contains(node.getValue()))).toList();
    }

    private static SavedBackup saveFrom(String node, String address, ClientOptions options, int group, Path partial,
                                        Path target) throws IOException {
        ManagedChannel channel = NodeChannels.open(address, options.credentials());
        try {
            Iterator<byte[]> chunks = ClientCalls.blockingServerStreamingCall(channel, BackupRpc.BACKUP,
                    CallOptions.DEFAULT.withDeadlineAfter(options.operationTimeout().toMillis(), TimeUnit.MILLISECONDS),
                    Groups.request(group));
            BackupCheck check = new BackupCheck("the backup " + (group == 0 ? "" : "of group " + group + " ") + "node " + node + " sent");
            try (FileChannel out = FileChannel.open(partial, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                while (chunks.hasNext()) {
                    byte[] chunk = chunks.next();
                    check.accept(chunk, 0, chunk.length);
                    ByteBuffer bytes = ByteBuffer.wrap(chunk);
                    while (bytes.hasRemaining()) {
                        out.write(bytes);
                    }
                }
                out.force(true);
            }
            BackupCheck.Verified verified = check.finish();
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            syncDirectory(target.toAbsolutePath().getParent());
            BackupHeader h = verified.header();
            return new SavedBackup(target, node, h.cluster(), h.clusterId(), h.term(), h.index(),
                    Instant.ofEpochMilli(h.takenAt()), verified.bytes(), verified.sha256());
        } finally {
            // Also cancels the call when the bytes were refused half way.
            channel.shutdownNow();
        }
    }

    private static String describe(Status status) {
        if (status.getCode() == Status.Code.DEADLINE_EXCEEDED) {
            return "did not finish in time; a larger state needs a longer timeout";
        }
        return status.getCode() + (status.getDescription() == null ? "" : " " + status.getDescription());
    }

    /** Makes the rename itself durable. */
    private static void syncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }
}
