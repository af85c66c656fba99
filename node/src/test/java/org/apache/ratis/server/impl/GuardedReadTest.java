package org.apache.ratis.server.impl;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ratchet.common.Credentials;
import io.ratchet.common.NodeChannels;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Refusal;
import io.ratchet.protocol.Rpc;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A linearizable read that a follower sent on to its leader (Ratis' ReadIndex) is refused as having no
 * leader once the follower no longer follows that leader, or has not heard from it for the minimum
 * election timeout, instead of waiting out Ratis' request timeout (3 s) on a leader that went silent
 * just after it was asked: the front end's guard ({@code FrontEnd.guardedRead}). The leader, n2, is a
 * socket that takes connections and never answers, as a paused process' does; one heartbeat made here
 * makes the real node follow it.
 */
class GuardedReadTest {
    @Test
    void aReadWaitingOnASilentLeaderIsRefusedOnceTheFollowerFollowsAnother(@TempDir Path dir) throws Exception {
        try (SilentLeader silent = SilentLeader.followedBy(dir, Duration.ofSeconds(30))) {
            LoneFollower lone = silent.lone;
            CompletableFuture<byte[]> read = read(lone.address());
            // The read has gone on to n2 and waits there.
            await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(1)).until(() -> !read.isDone());
            // n3 wins term 2 meanwhile; n2, the leader asked, is left behind.
            lone.heartbeatFrom("n3", 2);
            byte[] answer = read.get(2, TimeUnit.SECONDS);
            Refusal refusal = Codec.decodeRefusal(answer);
            assertEquals(Refusal.Reason.NO_LEADER, refusal.reason(), refusal.toString());
            assertEquals("node n1 follows leader n3 now, not n2", refusal.message());
        }
    }

    @Test
    void aReadWaitingOnALeaderSilentForTheElectionTimeoutIsRefused(@TempDir Path dir) throws Exception {
        try (SilentLeader silent = SilentLeader.followedBy(dir, Duration.ofSeconds(1))) {
            LoneFollower lone = silent.lone;
            byte[] answer = read(lone.address()).get(10, TimeUnit.SECONDS);
            Refusal refusal = Codec.decodeRefusal(answer);
            // A follower that stood for election meanwhile (its timeout is drawn from 1..120 s) gives the read
            // up for that reason instead.
            assumeTrue(lone.follower().getInfo().getCurrentRole() == RaftPeerRole.FOLLOWER, "the follower stood for election");
            assertEquals(Refusal.Reason.NO_LEADER, refusal.reason(), refusal.toString());
            assertTrue(refusal.message().startsWith("node n1 has not heard from its leader for "), refusal.message());
        }
    }

    /**
     * n2, a socket that takes connections and never answers, and the real node n1 following it after one
     * heartbeat of term 1; n1's election timeout is drawn from {@code min} to 120 s.
     */
    private record SilentLeader(ServerSocket socket, LoneFollower lone) implements AutoCloseable {
        static SilentLeader followedBy(Path dir, Duration min) throws Exception {
            ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            SilentLeader silent;
            try {
                silent = new SilentLeader(socket, LoneFollower.start(dir, min, Duration.ofSeconds(120),
                        Map.of("n2", "127.0.0.1:" + socket.getLocalPort())));
            } catch (Exception | AssertionError e) {
                socket.close();
                throw e;
            }
            try {
                silent.lone.heartbeatFrom("n2", 1);
                return silent;
            } catch (Exception | AssertionError e) {
                silent.close();
                throw e;
            }
        }

        @Override
        public void close() throws IOException {
            try {
                lone.close();
            } finally {
                socket.close();
            }
        }
    }

    /**
     * One get, sent as the client sends it, answered with the node's raw answer: results or a refusal. Its
     * channel is connected first, by a stale read the node answers from its own store, so that the get
     * reaches the node at once and not after a connection set up on a busy machine (a get that came after
     * the test's next heartbeat would go to that heartbeat's leader instead).
     */
    private static CompletableFuture<byte[]> read(String address) {
        ManagedChannel channel = NodeChannels.open(address, Credentials.NONE);
        CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS);
        byte[] stale = ClientCalls.blockingUnaryCall(channel, Rpc.STALE_READ, options, Codec.encodeQuery(new Query.Get("k")));
        assertFalse(Codec.isRefusal(stale), "a stale read answered from the node's store");
        return CompletableFuture.supplyAsync(() -> ClientCalls.blockingUnaryCall(channel, Rpc.READ, options,
                        Codec.encodeQuery(new Query.Gets(List.of(new Query.Get("k"))))))
                .whenComplete((bytes, error) -> channel.shutdownNow());
    }
}
