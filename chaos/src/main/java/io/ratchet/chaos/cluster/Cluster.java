package io.ratchet.chaos.cluster;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterAdmin;
import io.ratchet.common.Credentials;
import io.ratchet.client.NodeStatus;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.RatchetException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A fresh local cluster of node JVMs made for one run: it writes each node's configuration (the keys of
 * {@code conf/local-3/n1.properties}) under the run's directory, starts the nodes on the given network,
 * and stops them all, with the network, on {@link #close()}.
 *
 * <p>Beside the initial nodes it can hold spares: node slots with a configuration, an address and no
 * process, which a membership nemesis starts to join the cluster. Which nodes are members is the
 * cluster's own configuration, read with {@link #admin()}; a node's process knows only whether it should
 * run ({@link NodeProcess#inService()}).
 *
 * <p>With TLS, every node slot has a certificate of the run's own CA, and every client the harness makes
 * through {@link #options} trusts that CA; once authentication is on ({@link #authenticateAs}), those
 * clients also carry the token of the harness' administrator.
 */
public final class Cluster implements AutoCloseable {
    /** As the unit's TimeoutStopSec: a node that writes its class-data archive as it stops takes a few seconds more. */
    private static final Duration STOP_GRACE = Duration.ofSeconds(30);

    private final Network network;
    private final NodeFaults faults;
    private final Map<String, NodeProcess> nodes;
    private final int initialSize;
    private final String peers;
    /** Null for a plaintext cluster. */
    private final Certificates certificates;
    /** What the harness' own clients show: the CA (with TLS), and root's token once authentication is on. */
    private volatile Credentials credentials;
    /** For status calls (see {@link #leader}); asks every member any node names, not only the initial ones. */
    private volatile ClusterAdmin admin;
    /** The nodes' class-data archive: kept once they have stopped (see {@link #close}). */
    private final ClassArchive classArchive;
    private boolean closed;

    private Cluster(Network network, NodeFaults faults, Map<String, NodeProcess> nodes, int initialSize, String peers,
                    Certificates certificates, ClassArchive classArchive) {
        this.classArchive = classArchive;
        this.network = network;
        this.faults = faults;
        this.nodes = nodes;
        this.initialSize = initialSize;
        this.peers = peers;
        this.certificates = certificates;
        this.credentials = certificates == null ? Credentials.NONE : certificates.clientCredentials();
        this.admin = ClusterAdmin.connect(adminOptions(peers));
    }

    private ClientOptions adminOptions(String peers) {
        return options(peers).withTimeouts(Duration.ofSeconds(2), 3, Duration.ofSeconds(6));
    }

    /**
     * Options for a client of the harness' own (status, membership, setup, final reads) to {@code peers}:
     * with TLS it trusts the run's CA, and after {@link #authenticateAs} it carries the administrator's token.
     */
    public ClientOptions options(String peers) {
        return ClientOptions.parse(peers).withCredentials(credentials);
    }

    /** The CA alone (no token) with TLS, {@link Credentials#NONE} without: what a workload's user adds its token to. */
    public Credentials tlsCredentials() {
        return certificates == null ? Credentials.NONE : certificates.clientCredentials();
    }

    /**
     * From now on the harness' own clients carry {@code token} (an administrator's): called once
     * authentication is on, before any nemesis or workload runs. The status client is opened again with it.
     */
    public synchronized void authenticateAs(String token) {
        credentials = tlsCredentials().withToken(token);
        ClusterAdmin old = admin;
        admin = ClusterAdmin.connect(adminOptions(peers));
        old.close();
    }

    /** The storage quota of a run's cluster: its workloads' data is small. */
    public static final long QUOTA_MIB = 64;
    /**
     * The quota of a run with load clients ({@code --load}), whose reservations of fresh keys at full speed
     * filled 64 MiB in 30 minutes at one group (an hour's soak then measured quota refusals, not gaps).
     */
    public static final long LOADED_QUOTA_MIB = 2048;

    /**
     * Writes the node configurations under {@code dir} and starts {@code size} nodes from {@code jar}.
     * Does not wait for them: see {@link #awaitWritable}.
     *
     * @param spares            node slots beyond {@code size}, configured but not started (the network must
     *                          have addresses for {@code size + spares} nodes)
     * @param jvmOptions        options for each node's JVM
     * @param snapshotThreshold log entries between snapshots (low, so runs exercise snapshot and catch-up)
     * @param tlsDir            where to make the CA and the nodes' certificates for a TLS cluster; null for plaintext
     * @param faults            the fault libraries each node is started with ({@link NodeFaults#none()}: none)
     * @param groups            how many Raft groups the cluster is formed with
     * @param quotaMiB          the storage quota, in MiB ({@link #QUOTA_MIB}, or {@link #LOADED_QUOTA_MIB} under load)
     */
    public static Cluster start(int size, int spares, Network network, Path dir, Path jar, List<String> jvmOptions,
                                long snapshotThreshold, Path tlsDir, NodeFaults faults, int groups, long quotaMiB)
            throws IOException {
        Files.createDirectories(dir);
        Map<String, String> addresses = new LinkedHashMap<>();
        for (int n = 1; n <= size + spares; n++) {
            addresses.put("n" + n, network.address(n));
        }
        // Clients and initial nodes know the initial nodes; a spare knows them and itself (a node finds
        // its own port in its peers), and learns the rest from the configuration it is added to.
        String peers = addresses.entrySet().stream().limit(size).map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(","));
        Map<String, String> hosts = new LinkedHashMap<>();
        addresses.forEach((id, address) -> hosts.put(id, address.substring(0, address.lastIndexOf(':'))));
        Certificates certificates = tlsDir == null ? null : Certificates.make(tlsDir, hosts);
        Map<String, NodeProcess> nodes = new LinkedHashMap<>();
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ClassArchive classArchive = ClassArchive.of(jar, jvmOptions, java);
        for (int n = 1; n <= size + spares; n++) {
            String id = "n" + n;
            Path conf = dir.resolve(id + ".properties");
            Path storage = dir.resolve(id).toAbsolutePath();
            List<String> lines = new ArrayList<>(List.of(
                    "# Node " + id + " of a chaos run's cluster; written by the harness"
                            + (n > size ? " (a spare: started with --join)." : "."),
                    "id=" + id,
                    "peers=" + (n > size ? peers + "," + id + "=" + addresses.get(id) : peers),
                    "storage=" + storage,
                    "snapshot.threshold=" + snapshotThreshold,
                    "# The runs' data is small: a small quota (larger when load clients write fresh keys at full",
                    "# speed), small store caches, and no free-space floor (the runs' directories share the",
                    "# machine's disk with everything else).",
                    "quota.bytes=" + quotaMiB + "MiB",
                    "store.block.cache=16MiB",
                    "store.write.buffer=8MiB",
                    "store.min.free=0",
                    "# Election timeouts: the node's defaults, the ones a user gets.",
                    "groups=" + groups));
            if (certificates != null) {
                lines.add("# TLS on every port, with the run's own CA (scripts/certs).");
                lines.addAll(certificates.nodeConfig(id));
            }
            lines.add("");
            Files.writeString(conf, String.join("\n", lines));
            List<String> command = new ArrayList<>(network.launcher(n));
            command.add(java.toString());
            command.addAll(jvmOptions);
            command.addAll(classArchive.options(id));
            command.addAll(List.of("-jar", jar.toAbsolutePath().toString(), "--conf", conf.toAbsolutePath().toString()));
            nodes.put(id, new NodeProcess(id, addresses.get(id), command, faults.environment(id, storage), dir, storage,
                    dir.resolve(id + ".log"), dir.resolve(id + ".pid"), n <= size));
        }
        Cluster cluster = new Cluster(network, faults, nodes, size, peers, certificates, classArchive);
        try {
            for (NodeProcess node : nodes.values()) {
                node.start();
            }
        } catch (IOException | RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** The initial nodes, {@code n1=host:port,...}, the form {@link ClientOptions#parse} takes. */
    public String peers() {
        return peers;
    }

    /**
     * A new admin client that knows every node slot, as an operator knows every machine: it finds the
     * leader for a change even when the initial nodes are down or gone. Its connections are new: a gRPC
     * channel to a node that was down backs off for a while before it tries again, so a long-lived one
     * may not see a node that just came back. The caller closes it.
     */
    public ClusterAdmin openAdmin() {
        return ClusterAdmin.connect(adminOptions(nodes.values().stream().map(n -> n.id() + "=" + n.address())
                .collect(Collectors.joining(","))));
    }

    public Network network() {
        return network;
    }

    /** The clock and disk faults the nodes can be given. */
    public NodeFaults faults() {
        return faults;
    }

    /** Every node slot, spares and retired nodes too. */
    public List<NodeProcess> nodes() {
        return List.copyOf(nodes.values());
    }

    public NodeProcess node(String id) {
        NodeProcess node = nodes.get(id);
        if (node == null) {
            throw new IllegalArgumentException("no node " + id + " in " + nodes.keySet());
        }
        return node;
    }

    /** The node's 1-based number. */
    public int number(NodeProcess node) {
        return new ArrayList<>(nodes.keySet()).indexOf(node.id()) + 1;
    }

    /** The leader as the nodes report it (the one with the highest term, if two claim it), or empty. */
    public Optional<NodeProcess> leader() {
        return leaderStatus().map(s -> nodes.get(s.id()));
    }

    /** The status of the node that leads (group 0, the highest term's if two claim it), or empty. */
    private Optional<NodeStatus> leaderStatus() {
        return NodeStatus.leaderOf(admin.status(), 0);
    }

    /**
     * Each group's voters, in group order, as the node that leads it holds them (the highest term's, should
     * two claim to lead), and whether a change is under way in it; a group no node says it leads is left
     * out. On a cluster of several groups they differ while a membership change goes from group to group.
     */
    public List<GroupVoters> groupVoters() {
        List<NodeStatus> all = admin.status();
        List<GroupVoters> each = new ArrayList<>();
        for (int g = 0; g < NodeStatus.groupCount(all); g++) {
            int group = g;
            NodeStatus.leaderOf(all, group).map(s -> s.group(group).configuration())
                    .ifPresent(conf -> each.add(new GroupVoters(conf.voters(), conf.changing())));
        }
        return each;
    }

    /** A group's voters by id, and whether a change of them is under way (the old voters decide too). */
    public record GroupVoters(List<String> voters, boolean changing) {
    }

    /**
     * Waits until a write commits: first until every node accepts connections, then until one reports
     * itself leader, then a delete of a key that never exists, which goes through the log and fails its
     * condition. The first two steps are cheap polls; a write sent before there is a leader would only
     * sit in the client's retries.
     */
    public void awaitWritable(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int n = 1; n <= initialSize; n++) {
            String address = network.address(n);
            while (!accepts(address)) {
                giveUpAt(deadline, "node n" + n + " did not accept connections at " + address);
                Thread.sleep(200);
            }
        }
        while (leader().isEmpty()) {
            giveUpAt(deadline, "no node became leader");
            Thread.sleep(250);
        }
        // A client of its own: on the status client, whose stale reads went to single nodes in its ordered
        // stream, the first write waits for the whole operation timeout (seen with Ratis 3.3.0).
        try (RatchetClient writer = RatchetClient.connect(options(peers)
                .withTimeouts(Duration.ofSeconds(3), 5, Duration.ofSeconds(10)))) {
            while (true) {
                try {
                    writer.delete("chaos/.start-probe", 1);
                    return;
                } catch (RatchetException e) {
                    giveUpAt(deadline, "no write committed (" + e.getMessage() + ")");
                    Thread.sleep(500);
                }
            }
        }
    }

    private static void giveUpAt(long deadline, String what) throws IOException {
        if (System.nanoTime() > deadline) {
            throw new IOException(what + " in time; see the node logs");
        }
    }

    private static boolean accepts(String address) {
        int colon = address.lastIndexOf(':');
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Waits until {@code node} answers and has applied, in every group, what that group had committed when
     * the node first answered: a node restarted after a kill is back in service only then, and a fault
     * injected before is a second fault on a cluster still one node short. Returns how long it took, and
     * how much of that the node took to answer (its start) and the rest to catch up; or says it did not
     * catch up within {@code timeout}.
     */
    public String awaitCaughtUp(NodeProcess node, Duration timeout) throws InterruptedException {
        long started = System.nanoTime();
        long deadline = started + timeout.toNanos();
        long[] target = null;
        long answered = 0;
        while (System.nanoTime() < deadline) {
            List<NodeStatus> all = admin.status();
            Optional<NodeStatus> self = all.stream().filter(s -> s.id().equals(node.id())).findFirst()
                    .filter(s -> !"UNREACHABLE".equals(s.role()) && !NodeStatus.STARTING.equals(s.role()));
            if (self.isPresent()) {
                if (target == null) {
                    target = committed(all);
                    answered = System.nanoTime();
                }
                long[] applied = applied(self.get());
                boolean caughtUp = applied.length >= target.length;
                for (int g = 0; caughtUp && g < target.length; g++) {
                    caughtUp = applied[g] >= target[g];
                }
                if (caughtUp) {
                    long now = System.nanoTime();
                    return String.format(Locale.ROOT, "%s caught up %.1f s after its start (answered after %.1f s)",
                            node.id(), (now - started) / 1e9, (answered - started) / 1e9);
                }
            }
            Thread.sleep(100);
        }
        return node.id() + " did not catch up within " + timeout.toSeconds() + " s";
    }

    /** Per group, the highest commit index any node reports. */
    private static long[] committed(List<NodeStatus> all) {
        long[] committed = new long[NodeStatus.groupCount(all)];
        for (NodeStatus s : all) {
            for (int g = 0; g < committed.length; g++) {
                if (s.group(g) != null) {
                    committed[g] = Math.max(committed[g], s.group(g).commitIndex());
                }
            }
        }
        return committed;
    }

    private static long[] applied(NodeStatus s) {
        long[] applied = new long[Math.max(1, s.groups().size())];
        for (int g = 0; g < applied.length; g++) {
            applied[g] = s.group(g).appliedIndex();
        }
        return applied;
    }

    /**
     * Waits until every member answers, one is leader, and every member has applied what the leader had
     * committed when first asked (members by the leader's configuration: a removed node is not waited
     * for). Returns what it saw, for the report; gives up quietly at the timeout, since final reads go
     * through the leader anyway.
     */
    public String settle(Duration timeout) throws InterruptedException {
        long started = System.nanoTime();
        long deadline = started + timeout.toNanos();
        long target = -1;
        List<NodeStatus> last = List.of();
        try (ClusterAdmin fresh = openAdmin()) {
            while (System.nanoTime() < deadline) {
                List<NodeStatus> all = fresh.status();
                Optional<NodeStatus> leader = NodeStatus.leaderOf(all, 0);
                Set<String> members = leader.map(l -> l.configuration().members().stream()
                        .map(NodeStatus.ConfiguredPeer::id).collect(Collectors.toSet())).orElse(Set.of());
                last = leader.isEmpty() ? all : all.stream().filter(s -> members.contains(s.id())).toList();
                if (leader.isPresent() && target < 0) {
                    target = leader.get().commitIndex();
                }
                long goal = target;
                if (leader.isPresent() && last.stream().allMatch(s -> !"UNREACHABLE".equals(s.role()) && s.appliedIndex() >= goal)) {
                    return String.format(Locale.ROOT, "settled after %.1f s: leader %s, every member (%s) applied index %d",
                            (System.nanoTime() - started) / 1e9, leader.get().id(),
                            last.stream().map(NodeStatus::id).collect(Collectors.joining(",")), goal);
                }
                Thread.sleep(500);
            }
        }
        return "did not settle within " + timeout.toSeconds() + " s: " + last.stream()
                .map(s -> s.id() + " " + s.role() + " applied " + s.appliedIndex()).collect(Collectors.joining(", "));
    }

    /**
     * Stops every node (SIGCONT and SIGTERM to all, SIGKILL to any still running after a grace period),
     * keeps the class-data archive they wrote if there was none ({@link ClassArchive}), and removes the
     * network. Idempotent, and safe to call from a shutdown hook while the run also calls it.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (NodeProcess node : nodes.values()) {
            try {
                node.requestStop();
            } catch (IOException | RuntimeException e) {
                System.err.println("chaos: stopping " + node + ": " + e.getMessage());
            }
        }
        long deadline = System.nanoTime() + STOP_GRACE.toNanos();
        for (NodeProcess node : nodes.values()) {
            try {
                node.awaitStop(Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime())));
            } catch (IOException | RuntimeException e) {
                System.err.println("chaos: stopping " + node + ": " + e.getMessage());
            }
        }
        classArchive.keep();
        admin.close();
        network.close();
    }
}
