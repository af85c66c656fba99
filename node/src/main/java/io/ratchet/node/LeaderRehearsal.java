package io.ratchet.node;

import io.ratchet.statemachine.Directories;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

/**
 * Runs Ratis' leader path once in this JVM before the node can be elected: a voter and a listener of a
 * throwaway group, on loopback ports and a temporary directory, with the node's Ratis settings; the voter
 * elects itself, replicates a few writes to the listener and answers a few reads; then both are closed
 * and the directory deleted.
 *
 * <p>Why: the first time a JVM's Raft server becomes a leader, Ratis loads, verifies and links the leader's
 * classes and lambdas (its state, the appenders, their metrics) on the election thread: 57–486 ms in chaos
 * kill-leader runs on a busy two-core machine, against 6–10 ms for a JVM that had led before. Ratis counts
 * it as time in charge, and a follower whose election timer (restarted when it voted) ran out before the
 * first append arrived pre-voted, the new leader stepped down (no answers within the longest timeout), and
 * writers waited out its step-down pause: 2.4–5.4 s with no leader after one kill (docs/DESIGN.md,
 * "Failover"). The code is the JVM's, not the group's, so a rehearsal in any group warms it. It runs once per
 * JVM (an in-process test cluster pays once), on a thread of its own as the node's server starts; what fails
 * in it is logged and never stops the node. {@code -Dratchet.node.rehearseLeadership=false} leaves it out.
 */
final class LeaderRehearsal {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderRehearsal.class);
    private static final AtomicBoolean DONE = new AtomicBoolean();
    static final boolean ENABLED = !"false".equals(System.getProperty("ratchet.node.rehearseLeadership"));
    /** Writes and reads the leader handles: enough to run each step of its path, not to compile it. */
    private static final int REQUESTS = 8;
    private static final long DEADLINE_MILLIS = 15_000;
    /** Its thread, and the start of its temporary directory's name. */
    private static final String NAME = "ratchet-rehearsal";
    /** The rehearsal's servers' ids begin so; Ratis names their threads and log lines after them. */
    private static final String PEER_PREFIX = "rehearsal-";
    private static final Quiet QUIET = new Quiet();

    private LeaderRehearsal() {
    }

    /**
     * Starts the rehearsal on a thread of its own, once per JVM, with the node's Ratis settings; returns at
     * once. The node's server is already running: a node that has just (re)started must catch up before it
     * can win an election, which takes longer than the rehearsal, and a rehearsal in the foreground held a
     * restarted node out of its cluster for its whole time (1.8–10.4 s, median 4.5 s, in an hour of chaos on
     * a two-core machine running five nodes).
     */
    static void inBackground(RaftProperties nodeProperties) {
        if (!ENABLED || !DONE.compareAndSet(false, true)) {
            return;
        }
        Thread thread = new Thread(() -> {
            long start = System.nanoTime();
            try {
                run(nodeProperties);
                LOG.info("rehearsed Raft leadership in {} ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            } catch (IOException | RuntimeException e) {
                LOG.warn("the leadership rehearsal stopped early (this node's first leadership may be slower): {}", e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, NAME);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Runs one rehearsal: returns, once the leader has answered every request and both servers are closed,
     * the directory it ran in (deleted by then).
     */
    static Path run(RaftProperties nodeProperties) throws IOException, InterruptedException {
        sweepStale();
        Path dir = Files.createTempDirectory(NAME);
        List<RaftServer> servers = new ArrayList<>();
        // One voter, which elects itself without asking anyone, and a listener it replicates to: the
        // leader's state and an appender, with no vote to split and no one to depose it.
        int leaderPort = freePort();
        int listenerPort = freePort();
        List<RaftPeer> peers = List.of(peer(PEER_PREFIX + "leader", RaftPeerRole.FOLLOWER, leaderPort),
                peer(PEER_PREFIX + "listener", RaftPeerRole.LISTENER, listenerPort));
        QUIET.begin(peers);
        try {
            RaftGroup group = RaftGroup.valueOf(RaftGroupId.randomId(), peers);
            servers.add(server(group, peers.get(0), leaderPort, nodeProperties, dir));
            servers.add(server(group, peers.get(1), listenerPort, nodeProperties, dir));
            for (RaftServer server : servers) {
                server.start();
            }
            RaftServer.Division division = ready(servers.get(0), group.getGroupId());
            ClientId client = ClientId.randomId();
            for (int i = 0; i < REQUESTS; i++) {
                RaftClientRequest.Type type = i % 2 == 0 ? RaftClientRequest.writeRequestType() : RaftClientRequest.readRequestType();
                RaftClientRequest request = RaftClientRequest.newBuilder()
                        .setClientId(client).setServerId(division.getId()).setGroupId(group.getGroupId()).setCallId(i)
                        .setMessage(Message.valueOf("rehearsal " + i)).setType(type).build();
                // Writes go to the division, as the front end sends them (LocalSubmitter); reads to the server.
                CompletableFuture<RaftClientReply> reply = type.is(RaftClientRequestProto.TypeCase.WRITE)
                        && division instanceof RaftClientAsynchronousProtocol direct
                        ? direct.submitClientRequestAsync(request) : division.getRaftServer().submitClientRequestAsync(request);
                RaftClientReply answer = reply.orTimeout(DEADLINE_MILLIS, TimeUnit.MILLISECONDS).join();
                if (!answer.isSuccess()) {
                    throw new IllegalStateException("request " + i + " failed: " + answer.getException());
                }
            }
            return dir;
        } finally {
            for (RaftServer server : servers) {
                try {
                    server.close();
                } catch (IOException | RuntimeException e) {
                    LOG.debug("closing a rehearsal server", e);
                }
            }
            delete(dir);
            // Ratis' shared timer threads still report the closed servers' last timeouts for a few seconds.
            CompletableFuture.delayedExecutor(10, TimeUnit.SECONDS).execute(QUIET::end);
        }
    }

    /** The division that leads and is ready to take requests (its first entry of the term committed). */
    private static RaftServer.Division ready(RaftServer server, RaftGroupId group) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DEADLINE_MILLIS);
        RaftServer.Division division = server.getDivision(group);
        while (System.nanoTime() < deadline) {
            if (division.getInfo().isLeaderReady()) {
                return division;
            }
            Thread.sleep(5);
        }
        throw new IOException("no leader within " + DEADLINE_MILLIS + " ms");
    }

    private static RaftServer server(RaftGroup group, RaftPeer peer, int port, RaftProperties nodeProperties, Path dir)
            throws IOException {
        return RaftServer.newBuilder()
                .setServerId(peer.getId())
                .setGroup(group)
                .setProperties(properties(nodeProperties, dir.resolve(peer.getId().toString()), port))
                .setStateMachine(new Echo())
                .setOption(RaftStorage.StartupOption.FORMAT)
                .build();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static RaftPeer peer(String id, RaftPeerRole role, int port) {
        return RaftPeer.newBuilder().setId(id).setStartupRole(role)
                .setAddress(InetAddress.getLoopbackAddress().getHostAddress() + ":" + port).build();
    }

    /** The node's settings (the same code paths), on loopback, in the temporary directory, electing fast. */
    private static RaftProperties properties(RaftProperties nodeProperties, Path storage, int port) {
        RaftProperties p = new RaftProperties(nodeProperties);
        // One port each, never the node's: its server starts while these close.
        Stream.of(GrpcConfigKeys.Admin.HOST_KEY, GrpcConfigKeys.Admin.PORT_KEY, GrpcConfigKeys.Client.HOST_KEY,
                GrpcConfigKeys.Client.PORT_KEY).forEach(p::unset);
        RaftServerConfigKeys.setStorageDir(p, List.of(storage.toFile()));
        GrpcConfigKeys.Server.setHost(p, InetAddress.getLoopbackAddress().getHostAddress());
        GrpcConfigKeys.Server.setPort(p, port);
        TimeDuration min = TimeDuration.valueOf(100, TimeUnit.MILLISECONDS);
        TimeDuration max = TimeDuration.valueOf(200, TimeUnit.MILLISECONDS);
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, min);
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, max);
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(p, min);
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(p, max);
        RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(p, max);
        return p;
    }

    /**
     * Ratis logs each step of the two servers' lives (some 370 lines, most at INFO) into the node's log while
     * the node's own server starts: the rehearsal logs one line instead. While it runs (and ten seconds
     * after, for Ratis' shared timers), Logback drops Ratis' events below ERROR that are the rehearsal's:
     * logged on the thread running it or on the servers' own threads (Ratis names them after the server),
     * or naming its servers. The node runs on Logback; under another binding the lines stay.
     */
    private static final class Quiet extends TurboFilter {
        private final AtomicInteger running = new AtomicInteger();
        /** The thread running the rehearsal: Ratis logs the servers' settings on it as it builds them. */
        private volatile Thread rehearsing;
        /** What names the rehearsal in a line: its servers' ids, and their addresses (gRPC names channels by them). */
        private final Set<String> marks = ConcurrentHashMap.newKeySet();

        void begin(List<RaftPeer> peers) {
            rehearsing = Thread.currentThread();
            marks.add(PEER_PREFIX);
            peers.forEach(peer -> marks.add(peer.getAddress()));
            if (running.getAndIncrement() == 0 && LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
                start();
                context.addTurboFilter(this);
            }
        }

        void end() {
            if (running.decrementAndGet() == 0 && LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
                context.getTurboFilterList().remove(this);
            }
        }

        @Override
        public FilterReply decide(Marker marker, ch.qos.logback.classic.Logger logger, Level level, String format,
                                  Object[] params, Throwable t) {
            // Logback asks a turbo filter before its level check, for every call in the JVM (a disabled
            // trace in Ratis' append path too): all but the few events that would be written leave at once.
            if (level == null || !logger.getName().startsWith("org.apache.ratis")
                    || level.isGreaterOrEqual(Level.ERROR) || !level.isGreaterOrEqual(logger.getEffectiveLevel())) {
                return FilterReply.NEUTRAL;
            }
            if (Thread.currentThread() == rehearsing || Thread.currentThread().getName().startsWith(PEER_PREFIX)) {
                return FilterReply.DENY;
            }
            if (params != null) {
                for (Object param : params) {
                    if (param != null && names(String.valueOf(param))) {
                        return FilterReply.DENY;
                    }
                }
            }
            return format != null && names(format) ? FilterReply.DENY : FilterReply.NEUTRAL;
        }

        private boolean names(String text) {
            for (String mark : marks) {
                if (text.contains(mark)) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Deletes the directories of rehearsals that ended without deleting their own (a node killed while it
     * rehearsed leaves up to a log segment's 4 MB): those an hour old, when a rehearsal lasts seconds, so that
     * another node on this machine rehearsing now keeps its own.
     */
    private static void sweepStale() {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        long before = System.currentTimeMillis() - TimeUnit.HOURS.toMillis(1);
        try (Stream<Path> found = Files.list(tmp)) {
            for (Path dir : found.filter(p -> p.getFileName().toString().startsWith(NAME)).toList()) {
                if (Files.isDirectory(dir) && Files.getLastModifiedTime(dir).toMillis() < before) {
                    delete(dir);
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("could not sweep old rehearsal directories in {}", tmp, e);
        }
    }

    private static void delete(Path dir) {
        try {
            Directories.delete(dir);
        } catch (IOException e) {
            LOG.warn("could not delete the leadership rehearsal's directory {}: {}", dir, e.toString());
        }
    }

    /** A state machine that answers each write and each read with the request's own bytes. */
    private static final class Echo extends BaseStateMachine {
        @Override
        public CompletableFuture<Message> query(Message request) {
            return CompletableFuture.completedFuture(request);
        }
    }
}
