package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServerRpcWithProxy;
import org.apache.ratis.thirdparty.io.grpc.ConnectivityState;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.junit.jupiter.api.Test;

/**
 * Every node holds both of Ratis' channels to each peer open, the heartbeat channel included, before it
 * has ever led: a new leader's first heartbeat then waits for no connection ({@link PeerReconnect}). A
 * follower never sends a heartbeat, nor anything to the other follower, so without the warm-up those
 * channels stay idle until the node wins an election.
 */
class PeerChannelsClusterTest extends SharedClusterTest {

    @Test
    void everyNodeHoldsBothChannelsToEachPeerOpenBeforeItLeads() {
        String leader = cluster.awaitLeader();
        for (String id : cluster.nodeIds()) {
            for (String peer : cluster.nodeIds()) {
                if (peer.equals(id)) {
                    continue;
                }
                String which = id + " -> " + peer + (id.equals(leader) ? " (from the leader)" : " (from a follower)");
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertEquals(
                        Map.of("channel", ConnectivityState.READY, "hbChannel", ConnectivityState.READY),
                        states(id, peer), which));
            }
        }
    }

    /** The state of each of Ratis' channels from node {@code id} to {@code peer}, without asking for a connection. */
    private static Map<String, ConnectivityState> states(String id, String peer) throws Exception {
        RaftServerRpcWithProxy<?, ?> rpc = (RaftServerRpcWithProxy<?, ?>) cluster.node(id).raftServer().getServerRpc();
        Object client = rpc.getProxies().getProxy(RaftPeerId.valueOf(peer));
        Map<String, ConnectivityState> states = new TreeMap<>();
        for (String name : List.of("channel", "hbChannel")) {
            Field f = client.getClass().getDeclaredField(name);
            f.setAccessible(true);
            states.put(name, ((ManagedChannel) f.get(client)).getState(false));
        }
        return states;
    }
}
