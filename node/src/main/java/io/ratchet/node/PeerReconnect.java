package io.ratchet.node;

import io.ratchet.protocol.DaemonThreads;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerRpcWithProxy;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps this node's gRPC channels to its peers connected, so that neither an election nor a new leader's
 * first heartbeat waits for a connection. Two things, every {@link #PERIOD_MILLIS}:
 * <ul>
 * <li><b>Out of gRPC's reconnect backoff.</b> After a peer has been down for a few seconds, gRPC waits a
 * growing pause (1 s, 1.6 s, 2.6 s, ... up to 2 min) before it tries to connect again, and fails every
 * call at once meanwhile. Ratis 3.3.0 resets that backoff only on the leader's append path, not for
 * votes: so when the leader is lost shortly after a peer came back, the remaining nodes cannot reach
 * each other's votes until the pause ends. Measured in a chaos kill-leader run: an election held up
 * from 0.5 s to 1.9 s, "PRE_VOTE REJECTED received 0 response(s) and 2 exception(s): UNAVAILABLE"
 * (docs/PERFORMANCE.md). Resetting the backoff of a channel that is connected or connecting does nothing.
 * <li><b>Connected before they are needed.</b> Ratis keeps two channels to each peer, one for votes and
 * appends, one for heartbeats alone ({@code raft.grpc.server.heartbeat.channel}), and gRPC opens a
 * channel only at its first call. A node that has only followed has never sent a heartbeat, and a new
 * leader's first message to every follower is a heartbeat: its log appender then waits, before it sends
 * anything at all, for the heartbeat stream to become ready, which is a TCP connection and an HTTP/2 (and
 * with TLS, a TLS) handshake in the middle of a failover. On a busy two-core machine that wait outlasted
 * the followers' election timeout: a follower stood again, the new leader stepped down on its pre-vote
 * ({@code LOST_MAJORITY_HEARTBEATS}), and a one-second failover took three to five
 * (docs/DESIGN.md, "Failover"). Asking an idle channel for its state with a connection requested opens it;
 * asking a connected one does nothing.
 * </ul>
 *
 * <p>The channels live in Ratis' package-private {@code GrpcServerProtocolClient}; its public
 * {@code resetConnectBackoff()} and its {@code channel} and {@code hbChannel} fields are reached by
 * reflection. If a Ratis version moves them, this logs once and stops doing what it can no longer reach,
 * and the node works as before.
 */
final class PeerReconnect implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PeerReconnect.class);
    static final long PERIOD_MILLIS = 200;
    private static final List<String> CHANNELS = List.of("channel", "hbChannel");

    private final RaftServer server;
    private final List<RaftPeerId> peers;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-peer-reconnect"));
    private volatile Method reset;
    private volatile boolean resetting = true;
    /** The channel fields of Ratis' client class, once found; null until then. */
    private volatile List<Field> channels;
    private volatile boolean connecting = true;

    PeerReconnect(RaftServer server, List<RaftPeerId> peers) {
        this.server = server;
        this.peers = List.copyOf(peers);
        timer.scheduleWithFixedDelay(this::once, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void once() {
        if (!(server.getServerRpc() instanceof RaftServerRpcWithProxy<?, ?> rpc)) {
            return;
        }
        for (RaftPeerId peer : peers) {
            Object client;
            try {
                client = rpc.getProxies().getProxy(peer);
            } catch (IOException e) {
                LOG.debug("no channel to {} yet", peer, e);
                continue;
            }
            if (resetting) {
                resetBackoff(client);
            }
            if (connecting) {
                connect(client);
            }
        }
        if (!resetting && !connecting) {
            timer.shutdown();
        }
    }

    private void resetBackoff(Object client) {
        try {
            Method m = reset;
            if (m == null) {
                m = client.getClass().getMethod("resetConnectBackoff");
                m.setAccessible(true);
                reset = m;
            }
            m.invoke(client);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn("cannot reset the reconnect backoff of Ratis' channels ({}); elections after a peer "
                    + "restart may wait out gRPC's backoff", e.toString());
            resetting = false;
        }
    }

    private void connect(Object client) {
        try {
            List<Field> fields = channels;
            if (fields == null) {
                fields = new ArrayList<>();
                for (String name : CHANNELS) {
                    Field f = client.getClass().getDeclaredField(name);
                    f.setAccessible(true);
                    fields.add(f);
                }
                channels = fields = List.copyOf(fields);
            }
            for (Field f : fields) {
                // Null for the heartbeat channel when Ratis is set to send heartbeats on the other one.
                if (f.get(client) instanceof ManagedChannel channel) {
                    channel.getState(true);
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn("cannot open Ratis' peer channels ahead of need ({}); a new leader's first heartbeat may "
                    + "wait for a connection", e.toString());
            connecting = false;
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
