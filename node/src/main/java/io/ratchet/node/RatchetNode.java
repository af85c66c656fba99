package io.ratchet.node;

import io.ratchet.client.ClientOptions;
import io.ratchet.common.Failures;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.common.Readiness;
import io.ratchet.node.admin.AdminService;
import io.ratchet.node.security.Authorizer;
import io.ratchet.node.security.NodeTls;
import io.ratchet.node.security.TokenInterceptor;
import io.ratchet.node.http.GatewayClients;
import io.ratchet.node.http.HttpApi;
import io.ratchet.node.http.LocalNode;
import io.ratchet.node.http.Probes;
import io.ratchet.node.http.Routes;
import io.ratchet.node.metrics.NodeMetrics;
import io.ratchet.node.metrics.RaftState;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.RaftBytes;
import io.ratchet.protocol.Refusal;
import io.ratchet.protocol.Result;
import io.ratchet.statemachine.HeapBudget;
import io.ratchet.statemachine.KeyContention;
import io.ratchet.statemachine.RatchetStateMachine;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.server.GrpcServices;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running Ratchet server: a Ratis server with the compare-exchange state machine and the
 * {@link FrontEnd} clients talk to, both listening on its configured port. Its log and snapshots live in the configured storage directory and survive
 * restarts: the node always starts with {@code RECOVER}, which formats only an empty directory.
 */
public final class RatchetNode implements AutoCloseable {
    private static final long STAGING_TIMEOUT_MILLIS = 30_000;
    /** The leader's appender's sleeps after failures in a row (see {@link #properties}). */
    static final String APPENDER_RETRY_POLICY = "1ms,10, 100ms,1000000";

    private static final Logger LOG = LoggerFactory.getLogger(RatchetNode.class);
    /** A leader that stops hands over to a voter it heard from within this. */
    private static final long HAND_OVER_HEARD_WITHIN_MILLIS = 1_000;

    private final NodeConfig config;
    /** The cluster's Raft group id, from the node's storage (see {@link ClusterIdentity}): group 0's. */
    private final RaftGroupId groupId;
    /** Every group's id, in group order ({@link Groups}); the first is {@link #groupId}. */
    private final List<RaftGroupId> groupIds;
    private final RaftServer server;
    private final FrontEnd frontEnd;
    private final AdminService admin;
    private final Authorizer authorizer;
    /** The watches each group has of its own: one of each per group, in group order. */
    private final List<Sweeper> sweepers = new ArrayList<>();
    private final PeerReconnect reconnect;
    private final List<StalledLogWatch> stalledLogs = new ArrayList<>();
    private final PaceMeter pace;
    /** Other nodes' stalled shares, for every group's slow-leader watch and the leader balancer. */
    private final PaceAsker paceAsker;
    /** Which commands the other members can apply: the leader's gate for a later release's commands. */
    private final CommandSupport support;
    private final List<SlowLeaderWatch> slowLeaders = new ArrayList<>();
    private final List<QuotaBootstrap> quotaBootstraps = new ArrayList<>();
    /** Spreads the groups' leaders over the nodes; null on a cluster of one group. */
    private final LeaderBalancer balancer;
    /** Finishes transactions across groups left by their coordinators; null on a cluster of one group. */
    private final TransactionRecovery recovery;
    private final NodeMetrics metrics;
    private final CompletableFuture<Halt> halted;
    /** The HTTP API's own clients of the cluster, and the API; null when the node serves no HTTP. */
    private GatewayClients httpClients;
    private HttpApi http;
    /** Where HTTP calls that block (the status probe) run. */
    private final ExecutorService httpBlocking = Executors.newFixedThreadPool(2, DaemonThreads.named("ratchet-http-blocking"));

    private RatchetNode(NodeConfig config, List<RaftGroupId> groupIds, RaftServer server, FrontEnd frontEnd, AdminService admin,
                        Authorizer authorizer, NodeMetrics metrics, PaceMeter pace, CommandSupport support,
                        CompletableFuture<Halt> halted) {
        this.support = support;
        this.halted = halted;
        this.authorizer = authorizer;
        this.config = config;
        this.groupIds = List.copyOf(groupIds);
        this.groupId = groupIds.get(0);
        this.admin = admin;
        this.server = server;
        this.frontEnd = frontEnd;
        this.metrics = metrics;
        this.pace = pace;
        this.paceAsker = new PaceAsker(config.clientCredentials());
        // With none configured, a disk's worth, but no more than this node's disk holds (a leader refuses more).
        long disk = config.storage().toFile().getTotalSpace();
        long quota = config.quotaBytes() != 0 || disk == 0 ? config.effectiveQuota()
                : Math.max(Limits.MIN_QUOTA_BYTES, Math.min(config.effectiveQuota(), disk));
        // Each group holds its share of the cluster's quota, as the client's setQuota gives it.
        long share = Math.max(Limits.MIN_QUOTA_BYTES, (quota + groupIds.size() - 1) / groupIds.size());
        for (RaftGroupId id : groupIds) {
            sweepers.add(new Sweeper(server, id, config.sweepInterval()));
            stalledLogs.add(new StalledLogWatch(server, id));
            slowLeaders.add(new SlowLeaderWatch(server, id, pace, paceAsker));
            quotaBootstraps.add(new QuotaBootstrap(server, id, share, config.sweepInterval()));
        }
        metrics.bindLeaderHandOvers(() -> stalledLogs.stream().mapToLong(StalledLogWatch::handedOver).sum(),
                pace::stalledShare, () -> slowLeaders.stream().mapToLong(SlowLeaderWatch::handedOver).sum());
        this.reconnect = new PeerReconnect(server, config.peers().keySet().stream()
                .filter(id -> !id.equals(config.id())).map(RaftPeerId::valueOf).toList());
        this.balancer = groupIds.size() == 1 ? null : new LeaderBalancer(server, groupIds, LeaderBalancer.interval(),
                LeaderBalancer.steady(), paceAsker, SlowLeaderWatch.threshold());
        this.recovery = groupIds.size() == 1 ? null : new TransactionRecovery(server, groupIds);
    }

    /**
     * Starts the node: it recovers its state from its storage, or, when the storage is empty, forms the
     * cluster of its configured peers with them.
     *
     * @throws IllegalStateException when this JVM's heap is below what a node needs (see {@link HeapBudget})
     */
    public static RatchetNode start(NodeConfig config) throws IOException {
        return start(config, false);
    }

    /**
     * Starts the node; with {@code join}, a node whose storage is empty does not form a cluster of its own:
     * it waits, a member of no configuration, until a {@code members add} on the cluster adds it (the
     * leader then sends it a snapshot and the log, and makes it a voter once it has caught up). A node
     * whose storage already holds the cluster's state recovers from it either way, so restarting a
     * joined node needs no special flag.
     */
    public static RatchetNode start(NodeConfig config, boolean join) throws IOException {
        String tooSmall = HeapBudget.refusal(Runtime.getRuntime().maxMemory());
        if (tooSmall != null) {
            throw new IllegalStateException("node " + config.id() + " will not start: " + tooSmall);
        }
        String elsewhere = foreignAddress(config);
        if (elsewhere != null) {
            throw new IllegalStateException("node " + config.id() + " will not start: " + elsewhere);
        }
        // With TLS, Raft between the nodes is mutual TLS, and every port the server opens speaks only TLS,
        // its Ratis services answering nodes alone (NodeTls). Read first: bad files stop the node before
        // it touches its storage.
        NodeTls tls = config.tls() == null ? null : NodeTls.load(config.tls());
        RaftGroupId groupId = ClusterIdentity.resolve(config.storage(), config.group());
        List<RaftGroupId> groupIds = ClusterIdentity.resolveGroups(config.storage(), groupId, config.groups());
        // Ratis' way to add a server: it starts in the group with no peers, so it never stands for election
        // (it is in no configuration) until the leader's configuration names it.
        boolean waitToBeAdded = join && !ClusterIdentity.hasRaftState(config.storage(), groupId);
        RaftGroup group = waitToBeAdded ? RaftGroup.valueOf(groupId, List.of()) : group(config, groupId);
        NodeMetrics metrics = new NodeMetrics(config.id());
        if (tls != null) {
            metrics.bindCertificate(tls::certificate);
        }
        StampClock clock = new StampClock();
        PaceMeter pace = new PaceMeter();
        metrics.bindClock(clock::wallAhead, clock::steps);
        CompletableFuture<Halt> halted = new CompletableFuture<>();
        // One state machine, and one store, per group. The groups share the configured store memory. A new
        // machine each time Ratis asks: a group started again (addGroups) gets a fresh one.
        RocksKeyValueStore.Settings store = config.store().dividedAmong(groupIds.size());
        CommandSupport support = new CommandSupport(config.id(), config.clientCredentials());
        IntFunction<RatchetStateMachine> newMachine = g -> {
            RatchetStateMachine machine = new RatchetStateMachine(clock, store,
                    new RatchetStateMachine.FlushPolicy(config.snapshotThreshold(), RatchetStateMachine.FlushPolicy.DEFAULT.bytes()),
                    new SnapshotFetcher(config.id(), config.clientCredentials(), store, g));
            machine.listenToApplies(metrics.applyListener());
            machine.onMustStop(cause -> halted.complete(Halt.of(cause, config.storage())));
            RaftGroupId id = groupIds.get(g);
            machine.checkProposals(kind -> support.lackingNow(kind, id));
            return machine;
        };
        // Group 0's is made here, for the authorizer: group 0 is never started again.
        RatchetStateMachine stateMachine = newMachine.apply(0);
        // The permission table is the cluster's: kept in group 0, whose state every node holds.
        Authorizer authorizer = new Authorizer(stateMachine::authTable);
        FrontEnd frontEnd = new FrontEnd(config.id(), groupIds, metrics.rounds(), metrics.overQuota(), metrics.refusedBeforeLog(), authorizer,
                new DiskFloor(config.id(), config.storage(), config.minFreeBytes()), support);
        AdminService admin = new AdminService(groupIds, config.id(), config.peers().get(config.id()), config.clientCredentials(), authorizer);
        BackupService backup = new BackupService(config.id(), config.group(), groupIds, authorizer);
        // The front end is served on the client port, which is the node's one port: the address clients
        // are given is the one they reach it at.
        Parameters parameters = new Parameters();
        CommittedEntriesTrim trim = new CommittedEntriesTrim();
        GrpcConfigKeys.Server.setServicesCustomizer(parameters, (builder, types) -> {
            // Added before the TLS gate's interceptor, so that the gate runs first (gRPC runs the last added first).
            if (CommittedEntriesTrim.ENABLED && types.contains(GrpcServices.Type.SERVER)) {
                builder.intercept(trim);
            }
            if (tls != null) {
                tls.secure(builder);
            }
            if (!types.contains(GrpcServices.Type.CLIENT)) {
                return builder;
            }
            if (FrontEnd.ON_NETWORK_THREAD) {
                builder.callExecutor(FrontEnd::callExecutor);
            }
            return builder.addService(frontEnd.service()).addService(admin.service())
                    .addService(backup.service()).addService(backup.snapshotService()).addService(pace.service()).addService(support.service()).intercept(new TokenInterceptor());
        });
        if (tls != null) {
            GrpcConfigKeys.TLS.setConf(parameters, tls.ratis());
        }
        RaftProperties properties = properties(config);
        RaftServer server = RaftServer.newBuilder()
                .setServerId(RaftPeerId.valueOf(config.id()))
                .setGroup(group)
                .setProperties(properties)
                .setParameters(parameters)
                .setStateMachineRegistry(id -> {
                    int g = groupIds.indexOf(id);
                    if (g < 0) {
                        throw new IllegalStateException("the storage holds Raft group " + id
                                + ", which is not one of this cluster's " + groupIds.size() + " groups");
                    }
                    return g == 0 ? stateMachine : newMachine.apply(g);
                })
                .setOption(RaftStorage.StartupOption.RECOVER)
                .build();
        trim.attach(server);
        try {
            server.start();
            LeaderRehearsal.inBackground(properties);
            addGroups(server, config, groupIds, waitToBeAdded);
        } catch (IOException | RuntimeException e) {
            // Ratis wraps what stopped it (the store refusing its layout, a port in use) in layers of its own,
            // some unchecked: said here as the one cause, with what was opened closed again.
            closeAll(List.of(server::close, frontEnd::close, admin::close, pace::close, support::close, metrics::close));
            throw new IOException("node " + config.id() + " will not start: " + rootCause(e), e);
        }
        // Only now: until start returns, looking up the Raft group blocks while it loads its snapshot and
        // log, and a call would hold a gRPC thread that long. Calls before this are refused at once.
        frontEnd.attach(server);
        support.attach(server, groupIds);
        admin.attach(server);
        backup.attach(server);
        metrics.bindServer(server.getDivision(groupId), stateMachine, frontEnd::pendingWatches);
        if (groupIds.size() > 1) {
            List<RaftServer.Division> divisions = new ArrayList<>();
            for (RaftGroupId id : groupIds) {
                divisions.add(server.getDivision(id));
            }
            metrics.bindGroups(divisions);
        }
        RatchetNode node = new RatchetNode(config, groupIds, server, frontEnd, admin, authorizer, metrics, pace, support, halted);
        if (config.httpPort() != 0) {
            try {
                node.startHttp(tls);
            } catch (IOException | RuntimeException e) {
                node.close();
                throw e;
            }
        }
        return node;
    }

    /**
     * Starts the groups after the first that the server did not find in its storage: at a cluster's first
     * start, every one; later, one whose directory a crash kept from being made. Each starts as group 0
     * did (with the configured peers, or with none on a node waiting to be added).
     *
     * <p>Ratis starts every group directory it finds with no members of its own (only the group the server
     * is built with gets the configured ones), so a group whose log holds no configuration yet would never
     * elect: a restored cluster's groups (a store and Raft's metadata, no log), or a group this node made
     * and stopped before any entry reached it. Such a group is started again, on the same directory, with
     * the configured peers, as group 0 is.
     */
    private static void addGroups(RaftServer server, NodeConfig config, List<RaftGroupId> groupIds, boolean waitToBeAdded)
            throws IOException {
        Set<RaftGroupId> present = new HashSet<>();
        server.getGroupIds().forEach(present::add);
        for (RaftGroupId id : groupIds) {
            if (present.contains(id)) {
                if (waitToBeAdded || id.equals(groupIds.get(0))
                        || !server.getDivision(id).getRaftConf().getCurrentPeers().isEmpty()) {
                    continue;
                }
                manage(server, GroupManagementRequest.newRemove(ClientId.randomId(), server.getId(), 0, id, false, false), id);
            }
            RaftGroup group = waitToBeAdded ? RaftGroup.valueOf(id, List.of()) : group(config, id);
            manage(server, GroupManagementRequest.newAdd(ClientId.randomId(), server.getId(), 0, group, false), id);
        }
    }

    private static void manage(RaftServer server, GroupManagementRequest request, RaftGroupId id) throws IOException {
        RaftClientReply reply = server.groupManagement(request);
        if (!reply.isSuccess()) {
            throw new IOException("Raft group " + id + " did not start: " + reply.getException(), reply.getException());
        }
    }

    /**
     * The HTTP API is a client of the cluster like any other (as etcd's JSON gateway is a gRPC client of
     * its own node): its writes take a client session and group commit, and reach the leader's log
     * entries beside every other client's, from whichever node took the request.
     */
    private void startHttp(NodeTls tls) throws IOException {
        String peers = String.join(",", config.peers().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList());
        httpClients = new GatewayClients(ClientOptions.parse(peers).withGroup(config.group())
                .withCredentials(config.clientCredentials()));
        RaftServer.Division division = server.getDivision(groupId);
        RatchetStateMachine stateMachine = (RatchetStateMachine) division.getStateMachine();
        List<RaftServer.Division> divisions = new ArrayList<>();
        for (RaftGroupId id : groupIds) {
            divisions.add(server.getDivision(id));
        }
        LocalNode local = new LocalNode() {
            @Override
            public String id() {
                return config.id();
            }

            @Override
            public CompletableFuture<StaleItem> staleGet(String key) {
                Query.Get get = new Query.Get(key);
                try {
                    get.validate();
                } catch (InvalidCommandException e) {
                    return CompletableFuture.failedFuture(new InvalidRequestException(e.getMessage(), e));
                }
                RaftServer.Division holder = divisions.get(Groups.of(key, divisions.size()));
                long applied = holder.getInfo().getLastAppliedIndex();
                return holder.getStateMachine().query(RaftBytes.message(Codec.encodeQuery(get))).thenApply(reply -> {
                    Result.Found found = (Result.Found) Codec.decodeResults(reply.getContent().toByteArray()).get(0);
                    return new StaleItem(Optional.ofNullable(found.item()), applied);
                });
            }

            @Override
            public Refusal check(String token, Query query) {
                return authorizer.check(token, query);
            }

            @Override
            public int sessionCount() {
                return stateMachine.sessionCount();
            }

            @Override
            public KeyContention contention() {
                return stateMachine.contention();
            }

            @Override
            public Readiness readiness() {
                return RaftState.of(division).readiness();
            }

            @Override
            public String metrics() {
                return metrics.scrape();
            }
        };
        http = HttpApi.start(config.listenHost(), config.httpPort(), tls == null ? null : tls.https(),
                new Routes(httpClients, local, httpBlocking), new Probes(local));
    }

    /** The HTTP API's routes, for tests; null when the node serves no HTTP. */
    public HttpApi http() {
        return http;
    }

    static RaftGroup group(NodeConfig config, RaftGroupId groupId) {
        List<RaftPeer> peers = config.peers().entrySet().stream()
                .map(e -> RaftPeer.newBuilder().setId(e.getKey()).setAddress(e.getValue()).build())
                .toList();
        return RaftGroup.valueOf(groupId, peers);
    }

    /** Whether this node is in the cluster's configuration (a node started to join is not, until added). */
    public boolean isMember() {
        try {
            return RaftState.of(server.getDivision(groupId)).member();
        } catch (IOException e) {
            return false;
        }
    }

    /** What stopped a start, in words: the innermost cause, named by its kind unless that says nothing more. */
    static String rootCause(Throwable e) {
        Throwable root = Failures.rootCause(e);
        boolean plain = root instanceof IllegalStateException || root instanceof IllegalArgumentException;
        return plain ? root.getMessage() : root.getClass().getSimpleName() + ": " + root.getMessage();
    }

    private interface Closer {
        void close() throws Exception;
    }

    private static void closeAll(List<Closer> closers) {
        for (Closer c : closers) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.debug("closing after a failed start: {}", e.toString());
            }
        }
    }

    /**
     * Null when the address this node is to listen on (its host from {@code peers}, unless {@code listen}
     * says otherwise) is one of this machine's; else why not. The usual cause is a configuration copied to
     * another machine without its {@code id} changed: said in one line before anything is written, rather
     * than as Ratis' failure to bind.
     */
    static String foreignAddress(NodeConfig config) {
        try (ServerSocket probe = new ServerSocket()) {
            probe.bind(new InetSocketAddress(config.listenHost(), 0));
            return null;
        } catch (IOException e) {
            if (config.listen() != null) {
                return "its listen address, " + config.listen() + ", is not one of this machine's (" + e.getMessage() + ")";
            }
            return "its address in peers, " + config.peers().get(config.id()) + ", is not one of this machine's ("
                    + e.getMessage() + "): on each machine, id must name the peer whose address is that machine's"
                    + " (behind NAT, or in a container, set listen to an address of its own, or 0.0.0.0)";
        }
    }

    /**
     * When this node leads, hands leadership to the voter it heard from last and waits for that, at most
     * {@code within}: what a node told to stop does before it closes ({@link NodeMain}), so that its clients
     * wait out a transfer (the target catches up, then stands at once) rather than an election timeout and
     * a vote. A rolling restart or upgrade then costs clients no failed call. Every group it leads is
     * handed over, at once. True when it led some group and handed over each one it led.
     */
    public boolean handOverLeadership(Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        List<CompletableFuture<Boolean>> handOvers = new ArrayList<>();
        for (int g = 0; g < groupIds.size(); g++) {
            RaftServer.Division division;
            try {
                division = server.getDivision(groupIds.get(g));
            } catch (IOException e) {
                continue;
            }
            List<RaftPeerId> voters = HandOver.recentlyHeardVoters(division, HAND_OVER_HEARD_WITHIN_MILLIS);
            if (!voters.isEmpty()) {
                LOG.info("node {} leads{} and is stopping: it hands leadership to {} first", config.id(),
                        groupIds.size() == 1 ? "" : " group " + g, voters.get(0));
                handOvers.add(new HandOver(server, groupIds.get(g)).to(voters.get(0)));
            }
        }
        boolean all = !handOvers.isEmpty();
        for (CompletableFuture<Boolean> handOver : handOvers) {
            try {
                all &= handOver.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException | ExecutionException e) {
                LOG.warn("node {}: no hand-over within {} ms ({}); it stops leading as it closes", config.id(),
                        within.toMillis(), e.toString());
                all = false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return all;
    }

    /** Which commands the other members said they apply (tests make a node answer as an earlier release). */
    CommandSupport commandSupport() {
        return support;
    }

    /** Every group's id, in group order; the first is {@link #groupId()}. */
    public List<RaftGroupId> groupIds() {
        return groupIds;
    }

    /** The cluster's Raft group id. */
    public RaftGroupId groupId() {
        return groupId;
    }

    static RaftProperties properties(NodeConfig config) {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, List.of(config.storage().toFile()));
        // The node listens on its own address from peers, as its HTTP API does, not on every interface (Ratis'
        // default): nodes on different addresses of one host may then share a port, as the nodes of a real
        // cluster do, each on its machine (the release's test runs them so, on 127.0.0.11 to 127.0.0.13).
        GrpcConfigKeys.Server.setHost(p, config.listenHost());
        GrpcConfigKeys.Server.setPort(p, config.port());
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, millis(config.electionTimeoutMin().toMillis()));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, millis(config.electionTimeoutMax().toMillis()));
        // A leader cut off from the majority steps down after twice the longest election timeout
        // (Ratis' default: 10 s). Until then it keeps acting as leader, and after a partition heals its
        // stale appends and heartbeats muddle the next elections, which then take several times longer
        // (docs/PERFORMANCE.md, "Failover", has the chaos runs).
        RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(p,
                millis(2 * config.electionTimeoutMax().toMillis()));
        // Linearizable reads by ReadIndex: the leader answers once a majority has acknowledged, at its term, a
        // heartbeat sent after the read arrived. Not by Ratis 3.3.0's leader lease, which a deposed leader can
        // hold (docs/DESIGN.md, "Failover", names the two places in Ratis' code); FrontEnd.nudge makes up for
        // the heartbeat trigger Ratis can lose.
        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        RaftServerConfigKeys.Read.setLeaderLeaseEnabled(p, false);
        // A node being added has this long without answering the leader before the change is given up
        // (Ratis' default is 3 election timeouts, 1.8 s): a new node loading a large snapshot is busy.
        RaftServerConfigKeys.setStagingTimeout(p, millis(STAGING_TIMEOUT_MILLIS));
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        // Ratis asks the state machine once this many entries are past the last snapshot, and then after
        // every entry until the snapshot moves; the state machine flushes the store (and so lets the log be
        // purged) by its own FlushPolicy: snapshot.threshold entries, or fewer when they are large. Asked
        // only every 1024 entries, a log of group-commit entries (up to 200 KB each) grew to 170 MB before
        // its first purge, and a restart spent 4 s reading it (docs/PERFORMANCE.md, "The state on disk").
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, Math.min(32, config.snapshotThreshold()));
        RaftServerConfigKeys.Snapshot.setCreationGap(p, Math.min(1024, config.snapshotThreshold()));
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
        // A follower the leader's log no longer reaches is told so, and fetches a checkpoint of the leader's
        // store itself (SnapshotFetcher, SnapshotService): the state is a store on disk, not a file Ratis
        // could send, and the leader makes the checkpoint only when one is asked for.
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(p, false);
        // Purge up to the snapshot even while a follower is down: it catches up from the snapshot, and
        // a dead node cannot make the others keep their whole log.
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        // Purge whenever the store's flushed position passes a closed segment: entries can be large (group
        // commit), so a gap in entries would keep far more log than a restart wants to load.
        RaftServerConfigKeys.Log.setPurgeGap(p, 1);
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(config.segmentSizeBytes()));
        // No commit-index entries. With them on, the leader appends an entry recording the commit index
        // after every commit, and every node writes, replicates and fsyncs it: twice the entries, and the
        // next write waits behind that entry's send and flush. Raft needs no durable commit index: a
        // restarted node learns it from the leader. The price: a follower learns the commit index from the
        // leader's next append or heartbeat, so while writes flow its stale reads trail by one round,
        // and when they stop, by up to one heartbeat (half the minimum election timeout, 150 ms with the defaults).
        // Linearizable reads are unaffected: the leader answers them, and a follower's ReadIndex makes
        // the leader send it a heartbeat at once. docs/PERFORMANCE.md has the measurement.
        RaftServerConfigKeys.Log.setLogMetadataEnabled(p, false);
        // How long the leader's appender for a follower sleeps after the n-th failure in a row (an error, a
        // timeout, or an inconsistent log, which a restarted follower answers until it is found where it
        // left off). Ratis' default, "1ms,10, 1s,20, 5s,1000", sleeps 1 s from the 11th failure and 5 s from
        // the 31st, each ×0.5..1.5: a follower down for a few seconds under load was first contacted 2.5 to
        // 7.5 s after it was back, and with one node out, the next fault lost the majority for that long.
        // Here: ten 1 ms retries, then 100 ms apart. A dead follower costs one failed connection attempt every
        // 100 ms; a returning one waits at most 150 ms. (GrpcLogAppender.sleepForErrors.)
        RaftServerConfigKeys.Log.Appender.setRetryPolicy(p, APPENDER_RETRY_POLICY);
        // A follower appends on the gRPC thread that received the entries, in the stream's order, as Ratis did
        // before 3.3 (RaftServerImpl.appendEntriesAsync): with "compose" on (3.3.0's default) each append
        // hopped to the server executor and was tracked apart for the next request's consistency check. The
        // stream delivers requests one at a time and the log's append only queues the write for the log
        // worker, so the gRPC thread is not held up by the disk.
        RaftServerConfigKeys.Log.setAppendEntriesComposeEnabled(p, false);
        // The appender sends entries as soon as they are there, instead of waiting out 1 ms since its last
        // send (LogAppenderBase.getRemainingWaitTime): a lone writer's next entry comes about a round after
        // the last, so it nearly always waited part of that millisecond. Entries are batched already, by the
        // front end's group commit. Both settings, alternated against Ratis' defaults in one sitting
        // (docs/PERFORMANCE.md): a lone write's p50 1.52 / 1.28 -> 1.29 / 0.99 ms, reserve at 16 instances
        // +4 to 7 % with 5 % less CPU per write.
        RaftServerConfigKeys.Log.Appender.setWaitTimeMin(p, TimeDuration.ZERO);
        overrideFromSystemProperties(p);
        return p;
    }

    /**
     * Any {@code -Draft.*} JVM system property (e.g. {@code -Draft.server.log.appender.buffer.byte-limit=8MB})
     * is passed to Ratis as is: how a measurement tries a Ratis setting without a rebuild (see
     * docs/PERFORMANCE.md). What it sets is the operator's responsibility; Ratis validates values at start.
     */
    private static void overrideFromSystemProperties(RaftProperties p) {
        System.getProperties().stringPropertyNames().stream()
                .filter(name -> name.startsWith("raft."))
                .forEach(name -> p.set(name, System.getProperty(name)));
    }

    private static TimeDuration millis(long ms) {
        return TimeDuration.valueOf(ms, TimeUnit.MILLISECONDS);
    }

    public NodeConfig config() {
        return config;
    }

    /**
     * Completes when this node's storage fails under it (it then no longer serves as it should, and is to be
     * closed: {@link NodeMain} does that); never completes otherwise.
     */
    public CompletableFuture<Halt> halted() {
        return halted;
    }

    public RaftServer raftServer() {
        return server;
    }

    @Override
    public void close() throws IOException {
        if (http != null) {
            http.close();
        }
        if (httpClients != null) {
            httpClients.close();
        }
        httpBlocking.shutdownNow();
        reconnect.close();
        if (balancer != null) {
            balancer.close();
        }
        if (recovery != null) {
            recovery.close();
        }
        stalledLogs.forEach(StalledLogWatch::close);
        slowLeaders.forEach(SlowLeaderWatch::close);
        paceAsker.close();
        pace.close();
        support.close();
        sweepers.forEach(Sweeper::close);
        quotaBootstraps.forEach(QuotaBootstrap::close);
        frontEnd.close();
        admin.close();
        server.close();
        metrics.close();
    }
}
