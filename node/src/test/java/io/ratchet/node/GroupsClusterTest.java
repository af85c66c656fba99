package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.ClientOptions;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.NodeStatus;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.client.WatchResult;
import io.ratchet.client.backup.Backups;
import io.ratchet.client.backup.SavedBackup;
import io.ratchet.protocol.Batch;
import io.ratchet.recipes.lock.FairLocks;
import io.ratchet.recipes.lock.QueueLease;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Refusal;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Rpc;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster of four Raft groups on three real nodes: keys spread over the groups by their hash (or hash
 * tag), each group with its own log and leader, the client routing each call to its key's group, and
 * lists and multi-key reads gathered from every group in key order.
 */
class GroupsClusterTest {
    private static final int GROUPS = 4;

    @TempDir
    Path dir;

    @Test
    void keysSpreadOverTheGroupsAndReadBackInKeyOrderAcrossRestarts() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withGroups(GROUPS))) {
            RatchetClient client = cluster.client();
            assertEquals(GROUPS, client.groups());
            List<String> keys = new ArrayList<>();
            Set<Integer> groupsUsed = new HashSet<>();
            for (int i = 0; i < 40; i++) {
                String key = "spread/k" + i;
                keys.add(key);
                groupsUsed.add(Groups.of(key, GROUPS));
                assertTrue(client.put(key, i, 0).successful());
            }
            assertEquals(GROUPS, groupsUsed.size(), "40 keys reach all four groups");

            // Each group's store holds its own keys only (read on the group's leader, which applied every write
            // it acknowledged; leadership may move meanwhile, hence the wait).
            for (int g = 0; g < GROUPS; g++) {
                int group = g;
                long mine = keys.stream().filter(k -> Groups.of(k, GROUPS) == group).count();
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertEquals(mine, cluster.itemsOn(
                        cluster.awaitLeader(group), group).stream().filter(i -> i.key().startsWith("spread/")).count(),
                        "group " + group + " holds exactly the keys that hash to it"));
            }

            List<String> sorted = keys.stream().sorted(Comparator.comparing(Keys::normalize)).toList();
            assertEquals(sorted, client.list("spread/", 0, 100).stream().map(Item::key).toList());
            assertEquals(sorted.subList(10, 17), client.list("spread/", 10, 7).stream().map(Item::key).toList(),
                    "a page of the merged order");
            assertEquals(List.of(), client.list("spread/", 40, 5));
            List<String> some = List.of("spread/k7", "spread/k30", "spread/k1", "spread/missing");
            assertEquals(List.of("spread/k1", "spread/k30", "spread/k7"),
                    client.getAll(some).stream().map(Item::key).toList(), "found ones, in key order, from several groups");

            // Each group's own series: four groups, and every group led by one of the three nodes (scraped
            // one node after another while the balancer may move a group, hence the wait).
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                long leading = 0;
                for (String id : cluster.nodeIds()) {
                    String metrics = scrape(cluster, id);
                    for (int g = 0; g < GROUPS; g++) {
                        assertTrue(metrics.contains("ratchet_group_applied_index{group=\"" + g + "\""), id + " group " + g);
                    }
                    leading += metrics.lines().filter(l -> l.startsWith("ratchet_group_leader{") && l.endsWith(" 1.0")).count();
                }
                assertEquals(GROUPS, leading, "each group has one leader among the nodes' series");
            });

            JsonNode status = Json.MAPPER.readTree(get(cluster, "n1", "/v1/status"));
            status.path("nodes").forEach(n -> assertEquals(GROUPS, n.path("groups").size(), "the HTTP status: " + n));

            cluster.stopAll();
            cluster.startAll();
            cluster.awaitLeaders();
            RatchetClient after = cluster.client();
            assertEquals(sorted, after.list("spread/", 0, 100).stream().map(Item::key).toList(), "every group recovered");
            for (int i = 0; i < 40; i += 7) {
                assertEquals(String.valueOf(i), after.get("spread/k" + i).orElseThrow().value());
            }
        }
    }

    @Test
    void aConditionFailsWithTheCurrentIndexInEveryGroupAndHashTagsShareATransaction() {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withGroups(GROUPS))) {
            RatchetClient client = cluster.client();
            for (int g = 0; g < GROUPS; g++) {
                String key = keyInGroup("cas/", g);
                long index = client.put(key, "v1", 0).index();
                CompareExchangeResult again = client.put(key, "v2", 0);
                assertFalse(again.successful(), "create-only in group " + g);
                assertEquals(index, again.index());
                assertTrue(client.put(key, "v2", index).successful());
            }

            assertEquals(Groups.of("user:{42}", GROUPS), Groups.of("email:{42}", GROUPS));
            TransactionResult tagged = client.transaction(List.of(
                    new Command.Put("user:{42}", "\"ada\"", 0, null), new Command.Put("email:{42}", "\"ada@example.com\"", 0, null)));
            assertTrue(tagged.successful());
            assertEquals(tagged.index(), client.get("email:{42}").orElseThrow().index(), "one entry of one group");

            String a = keyInGroup("txn/", 0);
            String b = keyInGroup("txn/", 1);
            // A transaction across groups goes through transaction() (two-phase); one raw request cannot span them.
            InvalidRequestException across = assertThrows(InvalidRequestException.class, () -> RatchetClient.await(
                    client.submitAsync(Request.of(List.of(new Command.Transaction(List.of(
                            new Command.Put(a, "1", 0, null), new Command.Put(b, "1", 0, null))))))));
            assertTrue(across.getMessage().contains("hash tag"), across.getMessage());
            assertTrue(client.get(a).isEmpty() && client.get(b).isEmpty(), "nothing of it was written");
        }
    }

    @Test
    void aGroupsLeaderLostIsReplacedAndAWatchInAnotherGroupFires() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withGroups(GROUPS))) {
            RatchetClient client = cluster.client();
            String key = keyInGroup("failover/", 2);
            long first = client.put(key, "before", 0).index();
            CompletableFuture<WatchResult> watch = client.watchAsync(key, first, Duration.ofSeconds(20));

            String leader = cluster.awaitLeader(2);
            cluster.stopNode(leader);
            String next = cluster.awaitLeader(2);
            assertNotEquals(leader, next);
            CompareExchangeResult moved = client.put(key, "after", first);
            assertTrue(moved.successful());
            WatchResult fired = watch.get();
            assertTrue(fired.changed());
            assertEquals(moved.index(), fired.lastChange());

            cluster.startNode(leader);
            cluster.awaitLeaders();
            assertEquals("\"after\"", client.get(key).orElseThrow().value());
        }
    }

    @Test
    void aMessageSentToTheWrongGroupIsRefusedAndANodeWithAnotherCountDoesNotStart() throws Exception {
        String misplaced = keyInGroup("wrong/", 3);
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withGroups(GROUPS))) {
            String leader = cluster.awaitLeader();
            byte[] write = Codec.encodeBatches(List.of(Batch.untagged(List.of(Request.of(List.of(
                    new Command.Put(misplaced, "1", 0, null)))))));
            try (FrontEndClusterTest.Raw raw = new FrontEndClusterTest.Raw(cluster.address(leader))) {
                byte[] answer = raw.call(Rpc.WRITE, write);
                assertTrue(Codec.isRefusal(answer), "group 0 does not take a key of group 3");
                Refusal refusal = Codec.decodeRefusal(answer);
                assertEquals(Refusal.Reason.INVALID, refusal.reason());
                assertTrue(refusal.message().contains("is in group 3"), refusal.message());
                byte[] noSuchGroup = raw.stream(List.of(Rpc.frame(1, Rpc.READ_CALL, GROUPS,
                        Codec.encodeQuery(new Query.Stats())))).get(0);
                assertTrue(Codec.decodeRefusal(noSuchGroup).message().contains("there is no group 4"));
            }
            assertTrue(cluster.client().get(misplaced).isEmpty(), "nothing was written");

            cluster.stopNode("n3");
            cluster.reconfigure("n3", c -> c.withGroups(2));
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> RatchetNode.start(cluster.config("n3")));
            assertTrue(refused.getMessage().contains("holds a cluster of 4 groups"), refused.getMessage());
        }
    }

    @Test
    void leadersAllOnOneNodeSpreadBackOverTheNodes() throws Exception {
        // The nodes read the balancer's pace as they start: a round a second, and a voter steady after 3 s
        // (30 s in production), so the test waits seconds for what takes a node a minute.
        Duration steady = Duration.ofSeconds(3);
        System.setProperty("ratchet.balance.intervalMillis", "1000");
        System.setProperty("ratchet.balance.steadyMillis", Long.toString(steady.toMillis()));
        LocalCluster started;
        try {
            started = LocalCluster.start(3, dir, c -> c.withGroups(GROUPS));
        } finally {
            System.clearProperty("ratchet.balance.intervalMillis");
            System.clearProperty("ratchet.balance.steadyMillis");
        }
        try (LocalCluster cluster = started) {
            for (int g = 0; g < GROUPS; g++) {
                int group = g;
                String leader = cluster.awaitLeader(g);
                if (!leader.equals("n1")) {
                    RaftServer server = cluster.node(leader).raftServer();
                    server.transferLeadershipAsync(new TransferLeadershipRequest(ClientId.randomId(), server.getId(),
                            cluster.node(leader).groupIds().get(g), 1, RaftPeerId.valueOf("n1"), 3_000));
                    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.awaitLeader(group).equals("n1"));
                }
            }
            // n1 led all four: the spread settles at two, one and one, once n1 has heard n2 and n3 answer
            // for the steady time since it took the groups, a round or two later.
            await().atMost(steady.plusSeconds(30)).until(() -> spread(cluster).equals(List.of(1, 1, 2)));
            RatchetClient client = cluster.client();
            for (int g = 0; g < GROUPS; g++) {
                assertTrue(client.put(keyInGroup("balanced/", g), g, 0).successful());
            }
        }
    }

    @Test
    void aNodeIsAddedToAndRemovedFromEveryGroup() {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withGroups(GROUPS))) {
            RatchetClient client = cluster.client();
            for (int g = 0; g < GROUPS; g++) {
                assertTrue(client.put(keyInGroup("members/", g), g, 0).successful());
            }
            String address = cluster.startJoining("n4");
            client.admin().addMember("n4", address);
            for (int g = 0; g < GROUPS; g++) {
                int group = g;
                await().atMost(Duration.ofSeconds(30)).until(() -> cluster.itemsOn("n4", group).stream()
                        .anyMatch(i -> i.key().equals(keyInGroup("members/", group))));
            }
            // n4 learns each group's last configuration entry from that group's next append.
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertEquals(List.of("n1", "n2", "n3", "n4"), voters(cluster, "n4"), "n4 is a voter of every group"));

            client.admin().removeMember("n2");
            await().atMost(Duration.ofSeconds(30)).until(() -> voters(cluster, "n1").equals(List.of("n1", "n3", "n4")));
            // The status says each group's configuration, which is what an operator checks a change against.
            NodeStatus n1 = client.admin().status().stream().filter(s -> s.id().equals("n1")).findFirst().orElseThrow();
            assertEquals(GROUPS, n1.groups().size());
            for (NodeStatus.GroupStatus g : n1.groups()) {
                assertEquals(List.of("n1", "n3", "n4"), g.configuration().members().stream()
                        .map(NodeStatus.ConfiguredPeer::id).sorted().toList(), "group " + g.group() + "'s members");
                assertFalse(g.configuration().changing(), "group " + g.group() + " has no change under way");
            }
            cluster.stopNode("n2");
            for (int g = 0; g < GROUPS; g++) {
                assertTrue(client.put(keyInGroup("after/", g), g, 0).successful(), "group " + g + " has a majority without n2");
            }
        }
    }

    /**
     * An add that stopped after group 0 (made here by asking group 0's leader for that group's part alone, as
     * a leader lost half way leaves it): each group's status shows its own configuration, so the groups are
     * seen to differ, and the operator's asking again finishes the change in the groups that lack it.
     * ({@code MembersCommandTest} shows what {@code ratchet members} says meanwhile.)
     */
    @Test
    void aChangeStoppedHalfWayShowsInEachGroupsStatusAndAskingAgainFinishesIt() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withGroups(GROUPS))) {
            RatchetClient client = cluster.client();
            String address = cluster.startJoining("n4");
            cluster.addToOneGroup("n4", address, 0);
            String leader = cluster.awaitLeader(0);

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertEquals(List.of(true, false, false, false),
                    namesN4(client, leader), "only group 0 has n4"));
            client.admin().addMember("n4", address);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertEquals(List.of(true, true, true, true),
                    namesN4(client, leader), "every group has n4"));
            assertEquals(List.of("n1", "n2", "n3", "n4"), voters(cluster, leader));
        }
    }

    /** Whether each group's configuration, in the admin status of node {@code id}, names n4. */
    private static List<Boolean> namesN4(RatchetClient client, String id) {
        NodeStatus status = client.admin().status().stream().filter(s -> s.id().equals(id)).findFirst().orElseThrow();
        return status.groups().stream().map(g -> g.configuration().names("n4")).toList();
    }

    @Test
    void aFairLocksQueueIsInOneGroupSoItsTokensKeepIncreasing() {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withGroups(GROUPS))) {
            RatchetClient client = cluster.client();
            FairLocks locks = new FairLocks(client);
            String queue = locks.queuePrefix("jobs");
            assertEquals("fair-locks/{jobs}/", queue, "the name is made the queue's hash tag");
            long last = 0;
            for (int i = 0; i < 6; i++) {
                QueueLease lease = locks.acquire("jobs", Duration.ofSeconds(10), Duration.ofSeconds(5)).orElseThrow();
                assertEquals(Groups.of("fair-locks/{jobs}/anything", GROUPS), Groups.of(lease.key(), GROUPS));
                assertTrue(lease.fencingToken() > last, "token " + lease.fencingToken() + " after " + last);
                last = lease.fencingToken();
                locks.release(lease);
            }
            assertEquals("fair-locks/{a}b/", locks.queuePrefix("{a}b"), "a name with a tag of its own keeps it");
        }
    }

    @Test
    void aBackupOfEveryGroupRestoresIntoANewClusterOfAsManyGroups() throws Exception {
        Path file = dir.resolve("backup.rbk");
        List<String> keys = new ArrayList<>();
        try (LocalCluster cluster = LocalCluster.start(3, dir.resolve("old"), c -> c.withGroups(GROUPS))) {
            RatchetClient client = cluster.client();
            for (int g = 0; g < GROUPS; g++) {
                keys.add(keyInGroup("saved/", g));
                assertTrue(client.put(keys.get(g), g, 0).successful());
            }
            assertTrue(client.transaction(List.of(new Command.Put(keyInGroup("saved/across-", 0), "0", 0, null),
                    new Command.Put(keyInGroup("saved/across-", 3), "3", 0, null))).successful());
            List<SavedBackup> saved = Backups.saveGroups(cluster.options(), file);
            assertEquals(GROUPS, saved.size());
            for (int g = 0; g < GROUPS; g++) {
                assertEquals(Backups.groupFile(file, g), saved.get(g).file());
                assertTrue(Files.isRegularFile(saved.get(g).file()));
            }
            // The backup's hold on commits across groups is lifted once it is done.
            assertTrue(client.transaction(List.of(new Command.Put(keyInGroup("later/", 1), "1", 0, null),
                    new Command.Put(keyInGroup("later/", 2), "2", 0, null))).successful());
        }
        List<NodeConfig> fresh = new ArrayList<>();
        Map<String, String> peers = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            peers.put("n" + i, "127.0.0.1:" + FreePorts.next());
        }
        peers.keySet().forEach(id -> fresh.add(NodeConfig.of(id, peers, dir.resolve("new").resolve(id))
                .withStore(LocalCluster.TEST_STORE, 0).withGroups(GROUPS)));

        IllegalArgumentException fewer = assertThrows(IllegalArgumentException.class, () -> ClusterRestore.plan(file,
                fresh.stream().map(c -> c.withGroups(2)).toList(), null));
        assertTrue(fewer.getMessage().contains("backup of group 2"), fewer.getMessage());
        try (ClusterRestore.Plan plan = ClusterRestore.plan(file, fresh, null)) {
            assertEquals(GROUPS, plan.backups().size());
            ClusterRestore.write(plan);
        }
        List<RatchetNode> nodes = new ArrayList<>();
        try {
            for (NodeConfig c : fresh) {
                nodes.add(RatchetNode.start(c));
            }
            try (RatchetClient client = RatchetClient.connect(ClientOptions.parse(String.join(",", peers.values())))) {
                assertEquals(GROUPS, client.groups());
                for (int g = 0; g < GROUPS; g++) {
                    assertEquals(String.valueOf(g), client.get(keys.get(g)).orElseThrow().value(), "group " + g + " restored");
                    assertTrue(client.put(keys.get(g) + "-after", g, 0).successful(), "group " + g + " takes writes");
                }
                assertEquals(2, client.getAll(List.of(keyInGroup("saved/across-", 0), keyInGroup("saved/across-", 3))).size(),
                        "a transaction across groups, whole in the restored cluster");
            }
        } finally {
            for (RatchetNode n : nodes) {
                n.close();
            }
        }
    }

    /** The voters every group has, as node {@code id} sees them; fails when the groups differ. */
    private static List<String> voters(LocalCluster cluster, String id) {
        Set<List<String>> each = new HashSet<>();
        for (int g = 0; g < GROUPS; g++) {
            each.add(cluster.division(id, g).getRaftConf().getCurrentPeers(RaftPeerRole.FOLLOWER).stream()
                    .map(p -> p.getId().toString()).sorted().toList());
        }
        return each.size() == 1 ? each.iterator().next() : List.of("groups differ: " + each);
    }

    /** How many groups each node leads, in ascending order. */
    private static List<Integer> spread(LocalCluster cluster) {
        return cluster.nodeIds().stream().map(id -> led(cluster, id)).sorted().toList();
    }

    private static int led(LocalCluster cluster, String id) {
        int led = 0;
        for (int g = 0; g < GROUPS; g++) {
            if (cluster.division(id, g).getInfo().isLeader()) {
                led++;
            }
        }
        return led;
    }

    private static String scrape(LocalCluster cluster, String id) throws Exception {
        return get(cluster, id, "/metrics");
    }

    private static String get(LocalCluster cluster, String id, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(cluster.httpUrl(id) + path)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    /** A key under {@code prefix} that the cluster keeps in group {@code group}. */
    private static String keyInGroup(String prefix, int group) {
        return LocalCluster.keyInGroup(prefix, group, GROUPS);
    }
}
