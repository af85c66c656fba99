package io.ratchet.node;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.ClientOptions;
import io.ratchet.client.RatchetClient;
import io.ratchet.common.Credentials;
import io.ratchet.common.NodeChannels;
import io.ratchet.node.security.TlsFiles;
import io.ratchet.protocol.AdminRpc;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Result;
import io.ratchet.statemachine.RatchetStateMachine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;

/**
 * A real Ratchet cluster inside the test JVM: each node a Ratis server with its own storage
 * directory and a free loopback port. Nodes can be stopped and started again on the same data.
 * Always close it: it stops every node and every client it handed out.
 */
public final class LocalCluster implements AutoCloseable {
    private final Map<String, NodeConfig> configs = new LinkedHashMap<>();
    private final Map<String, RatchetNode> running = new LinkedHashMap<>();
    private final List<RatchetClient> clients = new ArrayList<>();
    /** The CA that issued the nodes' certificates; null for a plaintext cluster. */
    private final CertificateAuthority ca;

    private LocalCluster(CertificateAuthority ca) {
        this.ca = ca;
    }

    /** The store settings of a test cluster's nodes. */
    static final io.ratchet.statemachine.kv.RocksKeyValueStore.Settings TEST_STORE =
            new io.ratchet.statemachine.kv.RocksKeyValueStore.Settings(16L << 20, 8L << 20);

    public static LocalCluster start(int size, Path dir) {
        return start(size, dir, c -> c);
    }

    /** Starts {@code size} nodes; {@code tune} adjusts each node's config (snapshot threshold, groups, ...). */
    public static LocalCluster start(int size, Path dir, UnaryOperator<NodeConfig> tune) {
        return start(size, dir, tune, null);
    }

    /**
     * Starts {@code size} nodes with TLS, each with a node certificate {@code ca} issues: every port speaks
     * only TLS, and {@link #client()} trusts {@code ca} (without a client certificate).
     */
    public static LocalCluster startTls(int size, Path dir, CertificateAuthority ca) {
        return start(size, dir, c -> c.withTls(ca.node(c.id())), ca);
    }

    private static LocalCluster start(int size, Path dir, UnaryOperator<NodeConfig> tune, CertificateAuthority ca) {
        LocalCluster cluster = new LocalCluster(ca);
        Map<String, String> peers = new LinkedHashMap<>();
        for (int i = 1; i <= size; i++) {
            peers.put("n" + i, "127.0.0.1:" + FreePorts.next());
        }
        for (String id : peers.keySet()) {
            NodeConfig config = NodeConfig.of(id, peers, dir.resolve(id))
                    .withElectionTimeout(Duration.ofMillis(500), Duration.ofMillis(1000))
                    .withHttpPort(FreePorts.next())
                    // Small caches: many test clusters run one after another in one JVM; and no free-space floor,
                    // which a test's temporary directory on a full disk would trip.
                    .withStore(TEST_STORE, 0);
            cluster.configs.put(id, tune.apply(config));
        }
        try {
            for (String id : peers.keySet()) {
                cluster.startNode(id);
            }
            cluster.awaitLeaders();
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** Starts node {@code id} again on its data (after {@link #stopNode}). */
    public void startNode(String id) {
        try {
            running.put(id, RatchetNode.start(configs.get(id)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Starts a new node {@code id} that waits to be added ({@code --join}), configured as the first node
     * is, with its own storage beside theirs (and on a TLS cluster a certificate of the cluster's CA);
     * returns its address.
     */
    public String startJoining(String id) {
        return startJoining(id, ca == null ? null : ca.node(id));
    }

    /** As {@link #startJoining(String)}, with the TLS files given (null: plaintext). */
    public String startJoining(String id, TlsFiles tls) {
        NodeConfig first = configs.values().iterator().next();
        Map<String, String> peers = new LinkedHashMap<>(first.peers());
        peers.put(id, "127.0.0.1:" + FreePorts.next());
        NodeConfig config = new NodeConfig(id, peers, first.group(), first.storage().resolveSibling(id),
                first.snapshotThreshold(), first.segmentSizeBytes(), first.electionTimeoutMin(), first.electionTimeoutMax(),
                first.sweepInterval(), FreePorts.next(), first.quotaBytes(), tls, first.store(), first.minFreeBytes(), null,
                first.groups());
        configs.put(id, config);
        try {
            running.put(id, RatchetNode.start(config, true));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return peers.get(id);
    }

    /** Stops node {@code id} (its server closes; its data stays), as a leader kill does to the others' view. */
    public void stopNode(String id) {
        RatchetNode node = running.remove(id);
        if (node != null) {
            try {
                node.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Changes a node's config, for its next start. */
    void reconfigure(String id, UnaryOperator<NodeConfig> change) {
        configs.put(id, change.apply(configs.get(id)));
    }

    /**
     * Stops every running node, all at once: a node's close waits up to a second for each Raft log's
     * writer thread to notice it (Ratis polls its queue once a second), so three in turn took three.
     */
    void stopAll() {
        List<RatchetNode> nodes = new ArrayList<>(running.values());
        running.clear();
        ExecutorService closing = Executors.newFixedThreadPool(Math.max(1, nodes.size()));
        try {
            List<Future<Object>> closed = closing.invokeAll(nodes.stream().<Callable<Object>>map(node -> () -> {
                node.close();
                return null;
            }).toList());
            for (Future<Object> f : closed) {
                f.get();
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("a node did not stop cleanly", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the nodes stopped", e);
        } finally {
            closing.shutdown();
        }
    }

    void startAll() {
        configs.keySet().stream().filter(id -> !running.containsKey(id)).forEach(this::startNode);
    }

    /** Waits for a leader that is ready to serve, and returns its id. */
    public String awaitLeader() {
        return await().atMost(Duration.ofSeconds(30)).until(this::readyLeader, Optional::isPresent).orElseThrow();
    }

    private Optional<String> readyLeader() {
        return readyLeader(0);
    }

    /** Waits for a ready leader of each of the cluster's groups ({@link io.ratchet.protocol.Groups}). */
    void awaitLeaders() {
        int groups = configs.values().iterator().next().groups();
        for (int g = 0; g < groups; g++) {
            awaitLeader(g);
        }
    }

    /** Waits for a ready leader of group {@code group}, and returns its id. */
    String awaitLeader(int group) {
        return await().atMost(Duration.ofSeconds(30)).until(() -> readyLeader(group), Optional::isPresent).orElseThrow();
    }

    private Optional<String> readyLeader(int group) {
        return running.entrySet().stream()
                .filter(e -> {
                    var info = division(e.getValue(), group).getInfo();
                    return info.isLeader() && info.isLeaderReady();
                })
                .map(Map.Entry::getKey).findFirst();
    }

    public String peers() {
        return String.join(",", configs.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue().peers().get(e.getKey())).toList());
    }

    /** A client with default options (on a TLS cluster: trusting its CA); closed with the cluster. */
    public RatchetClient client() {
        return client(options());
    }

    /** Default client options for this cluster: its peers, and on a TLS cluster trust in its CA. */
    public ClientOptions options() {
        return ClientOptions.parse(peers()).withCredentials(ca == null ? Credentials.NONE : ca.trusting());
    }

    RatchetClient client(ClientOptions options) {
        RatchetClient client = RatchetClient.connect(options);
        clients.add(client);
        return client;
    }

    RaftServer.Division division(String id) {
        return division(running.get(id));
    }

    private RaftServer.Division division(RatchetNode node) {
        return division(node, 0);
    }

    /** Node {@code id}'s member of group {@code group}. */
    RaftServer.Division division(String id, int group) {
        return division(running.get(id), group);
    }

    private static RaftServer.Division division(RatchetNode node, int group) {
        try {
            return node.raftServer().getDivision(node.groupIds().get(group));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    long appliedIndex(String id) {
        return division(id).getInfo().getLastAppliedIndex();
    }

    /** Every item in one node's local store, read straight from its state machine. */
    List<Item> itemsOn(String id) {
        return itemsOn(id, 0);
    }

    /** The first key {@code prefix + i} (i = 0, 1, ...) in group {@code group} of {@code groups}. */
    static String keyInGroup(String prefix, int group, int groups) {
        for (int i = 0; ; i++) {
            String key = prefix + i;
            if (Groups.of(key, groups) == group) {
                return key;
            }
        }
    }

    /** One node's state machine of group {@code group}. */
    RatchetStateMachine machineOn(String id, int group) {
        return (RatchetStateMachine) division(id, group).getStateMachine();
    }

    /** A transaction across groups as one node's replica of group {@code group} sees it now. */
    Result.TxnState txnOn(String id, int group, String txn) {
        Message reply = machineOn(id, group).query(Message.valueOf(ByteString.copyFrom(Codec.encodeQuery(new Query.TxnStatus(List.of(txn)))))).join();
        return (Result.TxnState) Codec.decodeResults(reply.getContent().toByteArray()).get(0);
    }

    /** Every item in one node's local store of group {@code group}. */
    List<Item> itemsOn(String id, int group) {
        RatchetStateMachine sm = (RatchetStateMachine) division(id, group).getStateMachine();
        List<Item> all = new ArrayList<>();
        for (int start = 0; ; start += Limits.MAX_PAGE_SIZE) {
            Query.ListItems page = new Query.ListItems("", start, Limits.MAX_PAGE_SIZE);
            Message reply = sm.query(Message.valueOf(ByteString.copyFrom(Codec.encodeQuery(page)))).join();
            List<Item> items = ((Result.Items) Codec.decodeResults(reply.getContent().toByteArray()).get(0)).items();
            all.addAll(items);
            if (items.size() < Limits.MAX_PAGE_SIZE) {
                return all;
            }
        }
    }

    /** The address clients reach node {@code id} at. */
    String address(String id) {
        return configs.get(id).peers().get(id);
    }

    /**
     * The URL of node {@code id}'s HTTP API and console ({@code http://127.0.0.1:PORT}, or {@code https} on a
     * TLS cluster), running or not.
     */
    String httpUrl(String id) {
        return (ca == null ? "http" : "https") + "://127.0.0.1:" + configs.get(id).httpPort();
    }

    /** A raw call to node {@code id}'s admin service, answered by that node itself (a cluster without TLS). */
    JsonNode adminCall(String id, String request) throws IOException {
        ManagedChannel channel = NodeChannels.open(address(id), Credentials.NONE);
        try {
            return Json.MAPPER.readTree(ClientCalls.blockingUnaryCall(channel, AdminRpc.CALL,
                    CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), request.getBytes(StandardCharsets.UTF_8)));
        } finally {
            channel.shutdownNow();
        }
    }

    /**
     * Asks group {@code group}'s leader to add {@code id} to that group alone: a change left half way, as a
     * leader lost between groups leaves it (the operator's {@code members add} makes it in every group).
     */
    public void addToOneGroup(String id, String address, int group) throws IOException {
        JsonNode answer = adminCall(awaitLeader(group), Json.MAPPER.createObjectNode().put("op", "members.add")
                .put("id", id).put("address", address).put("group", group).toString());
        if (answer.hasNonNull("error")) {
            throw new IllegalStateException("adding " + id + " to group " + group + " was refused: " + answer);
        }
    }

    /** The running node {@code id}. */
    RatchetNode node(String id) {
        return running.get(id);
    }

    NodeConfig config(String id) {
        return configs.get(id);
    }

    List<String> nodeIds() {
        return List.copyOf(configs.keySet());
    }

    @Override
    public void close() {
        clients.forEach(RatchetClient::close);
        stopAll();
    }
}
