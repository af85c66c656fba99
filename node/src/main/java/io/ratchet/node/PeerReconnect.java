package io.ratchet.node;

import io.ratchet.protocol.DaemonThreads;
import java.io.IOException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerRpcWithProxy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps this node's channels to its peers from sitting out gRPC's reconnect backoff. After a peer has
 * been down for a few seconds, gRPC waits a growing pause (1 s, 1.6 s, 2.6 s, ... up to 2 min) before
 * it tries to connect again, and fails every call at once meanwhile. Ratis 3.3.0 resets that backoff
 * only on the leader's append path, not for votes: so when the leader is lost shortly after a peer came
 * back, the remaining nodes cannot reach each other's votes until the pause ends. Measured in a chaos
 * kill-leader run: an election held up from 0.5 s to 1.9 s, "PRE_VOTE REJECTED received 0 response(s)
 * and 2 exception(s): UNAVAILABLE" (docs/PERFORMANCE.md). Resetting the backoff of a channel that is
 * connected or connecting does nothing, so this runs on a short period.
 *
 * <p>The channel lives in Ratis' package-private {@code GrpcServerProtocolClient}, whose public
 * {@code resetConnectBackoff()} is reached by reflection; if a Ratis version moves it, this logs once
 * and stops, and the node works as before.
 */
final class PeerReconnect implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PeerReconnect.class);
    static final long PERIOD_MILLIS = 200;

    private final RaftServer server;
    private final List<RaftPeerId> peers;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-peer-reconnect"));
    private volatile Method reset;

    PeerReconnect(RaftServer server, List<RaftPeerId> peers) {
        this.server = server;
        this.peers = List.copyOf(peers);
        timer.scheduleWithFixedDelay(this::resetAll, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void resetAll() {
        if (!(server.getServerRpc() instanceof RaftServerRpcWithProxy<?, ?> rpc)) {
            return;
        }
        for (RaftPeerId peer : peers) {
            try {
                Object client = rpc.getProxies().getProxy(peer);
                Method m = reset;
                if (m == null) {
                    m = client.getClass().getMethod("resetConnectBackoff");
                    m.setAccessible(true);
                    reset = m;
                }
                m.invoke(client);
            } catch (IOException e) {
                LOG.debug("no channel to {} yet", peer, e);
            } catch (ReflectiveOperationException | RuntimeException e) {
                LOG.warn("cannot reset the reconnect backoff of Ratis' channels ({}); elections after a peer "
                        + "restart may wait out gRPC's backoff", e.toString());
                timer.shutdown();
                return;
            }
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
