package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.backup.Backups;
import io.ratchet.client.backup.SavedBackup;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Limits;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.ratis.protocol.RaftGroupId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backup and restore on real clusters: a backup taken while writers run holds exactly the acknowledged
 * writes at or below its index, and a cluster restored from it (new storage, new ports, new cluster id)
 * serves them and goes on above that index.
 */
class BackupRestoreClusterTest {
    private static final int WRITERS = 4;

    @TempDir
    Path dir;

    /** A create-only put the cluster acknowledged. */
    private record Ack(String key, String value, long index) {
    }

    @Test
    void aBackupUnderLoadRestoresEveryWriteAcknowledgedUpToItsIndexAndNoneAbove() throws Exception {
        Path file = dir.resolve("ratchet.rbk");
        Queue<Ack> acks = new ConcurrentLinkedQueue<>();
        List<Ack> ackedBeforeTheBackup;
        SavedBackup backup;
        RaftGroupId oldId;
        try (LocalCluster old = LocalCluster.start(3, dir.resolve("old"))) {
            oldId = old.node("n1").groupId();
            AtomicBoolean stop = new AtomicBoolean();
            Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                RatchetClient client = old.client();
                String prefix = "w" + w + "/";
                Thread writer = new Thread(() -> {
                    try {
                        for (int n = 0; !stop.get(); n++) {
                            CompareExchangeResult r = client.put(prefix + n, n, 0);
                            assertTrue(r.successful(), r.toString());
                            acks.add(new Ack(r.key(), r.value(), r.index()));
                        }
                    } catch (Throwable t) {
                        failures.add(t);
                    }
                }, "writer-" + w);
                writer.start();
                writers.add(writer);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> acks.size() >= 50);

            ackedBeforeTheBackup = List.copyOf(acks);
            backup = Backups.save(ClientOptions.parse(old.peers()), file);
            // The state a node wrote for it goes when the call ends.
            await().atMost(Duration.ofSeconds(10)).until(() -> old.nodeIds().stream().noneMatch(id -> Files.exists(
                    old.config(id).storage().resolve(oldId.getUuid().toString()).resolve("tmp").resolve("backup.snapshot"))));
            int atBackup = acks.size();
            await().atMost(Duration.ofSeconds(30)).until(() -> acks.size() >= atBackup + 50);
            stop.set(true);
            for (Thread writer : writers) {
                writer.join();
            }
            assertTrue(failures.isEmpty(), "writers failed: " + failures);
        }

        assertEquals(Files.size(file), backup.bytes());
        assertTrue(acks.stream().anyMatch(a -> a.index() > backup.index()), "writes went on after the backup's index");
        for (Ack a : ackedBeforeTheBackup) {
            assertTrue(a.index() <= backup.index(), a + " was acknowledged before the backup was asked for");
        }

        try (LocalCluster restored = LocalCluster.start(3, dir.resolve("restored"))) {
            // A fresh cluster on new ports and directories, stopped and emptied: what an operator restores into.
            restored.stopAll();
            List<NodeConfig> nodes = restored.nodeIds().stream().map(restored::config).toList();
            IllegalArgumentException busy = assertThrows(IllegalArgumentException.class,
                    () -> ClusterRestore.plan(file, nodes, null));
            assertTrue(busy.getMessage().contains("is not empty"), busy.getMessage());
            nodes.forEach(n -> deleteTree(n.storage()));

            // Two nodes on one machine get a new id; the third, "elsewhere", is given it.
            ClusterRestore.Plan first = ClusterRestore.plan(file, nodes.subList(0, 2), null);
            ClusterRestore.write(first);
            ClusterRestore.write(ClusterRestore.plan(file, nodes.subList(2, 3), first.clusterId().getUuid()));
            restored.startAll();
            awaitLeader(restored);

            for (String id : restored.nodeIds()) {
                assertEquals(first.clusterId(), restored.node(id).groupId());
                assertNotEquals(oldId, restored.node(id).groupId());
            }
            RatchetClient client = restored.client();
            Map<String, Item> items = new HashMap<>();
            for (int w = 0; w < WRITERS; w++) {
                allItems(client, "w" + w + "/").forEach(i -> items.put(i.key(), i));
            }
            for (Ack a : acks) {
                Item item = items.get(a.key());
                if (a.index() <= backup.index()) {
                    assertTrue(item != null && item.index() == a.index() && item.value().equals(a.value()),
                            a + " restored as " + item);
                } else {
                    assertEquals(null, item, a + " is above the backup's index " + backup.index());
                }
            }
            Item highest = items.values().stream().max(Comparator.comparingLong(Item::index)).orElseThrow();
            assertTrue(highest.index() <= backup.index(), highest + " is above the backup's index " + backup.index());

            CompareExchangeResult next = client.put("after/restore", 1, 0);
            assertTrue(next.successful());
            assertTrue(next.index() > backup.index(), "a new write gets index " + next.index() + ", above "
                    + backup.index() + ": no index is given out twice");
        }
    }

    private static List<Item> allItems(RatchetClient client, String prefix) {
        List<Item> all = new ArrayList<>();
        for (int start = 0; ; start += Limits.MAX_PAGE_SIZE) {
            List<Item> page = client.list(prefix, start, Limits.MAX_PAGE_SIZE);
            all.addAll(page);
            if (page.size() < Limits.MAX_PAGE_SIZE) {
                return all;
            }
        }
    }

    /** LocalCluster looks its nodes up under the id a fresh cluster takes; a restored one has another. */
    private static void awaitLeader(LocalCluster cluster) {
        await().atMost(Duration.ofSeconds(30)).until(() -> cluster.nodeIds().stream().anyMatch(id -> {
            RatchetNode node = cluster.node(id);
            try {
                var info = node.raftServer().getDivision(node.groupId()).getInfo();
                return info.isLeader() && info.isLeaderReady();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }));
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
