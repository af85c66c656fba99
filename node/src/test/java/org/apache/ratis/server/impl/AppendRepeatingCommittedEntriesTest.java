package org.apache.ratis.server.impl;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto.AppendResult;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.grpc.RaftServerProtocolServiceGrpc;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.LogProtoUtils;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A leader sends a follower entries it has committed already, followed by new ones: what a leader does
 * after resetting where it sends from while earlier appends are still on their way (io.ratchet.node's
 * {@code CommittedEntriesTrim} says why that feeds on itself). Ratis alone refuses the whole append; the
 * node, through its Raft port, takes the new entries.
 */
class AppendRepeatingCommittedEntriesTest {
    @Test
    void aFollowerTakesTheNewEntriesOfAnAppendThatRepeatsCommittedOnes(@TempDir Path dir) throws Exception {
        try (LoneFollower lone = LoneFollower.start(dir, Duration.ofSeconds(120), Duration.ofSeconds(180))) {
            RaftServerImpl follower = lone.follower();
            AppendEntriesReplyProto first = follower.appendEntriesAsync(append(follower, 1, null, 0, 4, 4)).get();
            assertEquals(AppendResult.SUCCESS, first.getResult());
            await().atMost(Duration.ofSeconds(10)).until(() -> follower.getState().getLog().getLastCommittedIndex() == 4);

            AppendEntriesRequestProto repeating = append(follower, 2, TermIndex.valueOf(1, 2), 3, 7, 4);
            AppendEntriesReplyProto toRatis = follower.appendEntriesAsync(repeating).get();
            assertEquals(AppendResult.INCONSISTENCY, toRatis.getResult(), "Ratis 3.3.0 refuses it whole");
            assertEquals(5, toRatis.getNextIndex());

            AppendEntriesReplyProto toNode = overRaftPort(lone.address(), repeating).get(10, TimeUnit.SECONDS);
            assertEquals(AppendResult.SUCCESS, toNode.getResult(), toNode.toString());
            assertEquals(7, toNode.getMatchIndex());
            assertEquals(7, follower.getState().getLog().getLastEntryTermIndex().getIndex());
        }
    }

    /** An append from n2, leading term 1, of metadata entries {@code from..to}. */
    private static AppendEntriesRequestProto append(RaftServerImpl follower, long callId, TermIndex previous,
                                                    long from, long to, long leaderCommit) {
        RaftGroupMemberId leader = RaftGroupMemberId.valueOf(RaftPeerId.valueOf("n2"), follower.getMemberId().getGroupId());
        List<LogEntryProto> entries = LongStream.rangeClosed(from, to).mapToObj(i -> LogProtoUtils.toLogEntryProto(0, 1, i)).toList();
        return ServerProtoUtils.toAppendEntriesRequestProto(leader, follower.getId(), 1, entries, leaderCommit, false,
                previous, List.of(), callId, null);
    }

    private static CompletableFuture<AppendEntriesReplyProto> overRaftPort(String address, AppendEntriesRequestProto append) {
        int colon = address.lastIndexOf(':');
        ManagedChannel channel = NettyChannelBuilder.forAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)))
                .usePlaintext().build();
        CompletableFuture<AppendEntriesReplyProto> reply = new CompletableFuture<>();
        StreamObserver<AppendEntriesRequestProto> requests = RaftServerProtocolServiceGrpc.newStub(channel).appendEntries(new StreamObserver<>() {
            @Override
            public void onNext(AppendEntriesReplyProto value) {
                reply.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                reply.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                reply.completeExceptionally(new IllegalStateException("the stream ended without a reply"));
            }
        });
        requests.onNext(append);
        return reply.whenComplete((r, t) -> {
            requests.onCompleted();
            channel.shutdownNow();
        });
    }
}
