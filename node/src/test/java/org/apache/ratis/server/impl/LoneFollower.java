package org.apache.ratis.server.impl;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ratchet.node.FreePorts;
import io.ratchet.node.NodeConfig;
import io.ratchet.node.RatchetNode;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * One real node, n1, of a three-node configuration whose other two (n2, n3) are never started: the
 * tests of this package stand in for them with requests made by hand. Its election timeout is drawn
 * between {@code min} and {@code max}; long ones keep it from standing while a test runs.
 *
 * @param node     the running node; closed with this
 * @param follower its Raft division, alive
 * @param address  its client address
 */
record LoneFollower(RatchetNode node, RaftServerImpl follower, String address) implements AutoCloseable {
    static LoneFollower start(Path dir, Duration min, Duration max) throws Exception {
        return start(dir, min, max, Map.of());
    }

    /** As {@link #start(Path, Duration, Duration)}, with the addresses given here for some of n2 and n3. */
    static LoneFollower start(Path dir, Duration min, Duration max, Map<String, String> addresses) throws Exception {
        Map<String, String> peers = new LinkedHashMap<>();
        for (String id : List.of("n1", "n2", "n3")) {
            peers.put(id, addresses.getOrDefault(id, "127.0.0.1:" + FreePorts.next()));
        }
        RatchetNode node = RatchetNode.start(NodeConfig.of("n1", peers, dir.resolve("n1")).withElectionTimeout(min, max));
        try {
            RaftServerImpl follower = (RaftServerImpl) node.raftServer().getDivision(node.groupId());
            await().atMost(Duration.ofSeconds(30)).until(() -> follower.getInfo().isAlive());
            return new LoneFollower(node, follower, peers.get("n1"));
        } catch (Exception | AssertionError e) {
            try {
                node.close();
            } catch (IOException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    /**
     * One heartbeat from {@code leader} of {@code term}, as a leader's first append is (no entries, nothing
     * committed yet): the node then follows it, and counts its silence from now.
     */
    void heartbeatFrom(String leader, long term) throws Exception {
        RaftGroupMemberId from = RaftGroupMemberId.valueOf(RaftPeerId.valueOf(leader), follower.getMemberId().getGroupId());
        AppendEntriesReplyProto heard = follower.appendEntriesAsync(ServerProtoUtils.toAppendEntriesRequestProto(
                from, follower.getId(), term, List.of(), 0, false, null, List.of(), term, null)).get();
        assertEquals(AppendEntriesReplyProto.AppendResult.SUCCESS, heard.getResult());
        assertEquals(RaftPeerId.valueOf(leader), follower.getInfo().getLeaderId());
    }

    @Override
    public void close() throws IOException {
        node.close();
    }
}
