package io.ratchet.client;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.GroupName;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.RaftBytes;
import io.ratchet.protocol.Result;
import java.io.IOException;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.LogInfoProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;

/**
 * Administration through Ratis' own client protocol: each node's role, term and log indexes, which only
 * Ratis knows. (Every data operation goes through the front end instead.)
 */
final class StatusProbe {
    private StatusProbe() {
    }

    /** Asks every configured node, in parallel, with a Ratis client of its own for this call only. */
    static List<NodeStatus> status(ClientOptions options) {
        List<RaftPeer> peers = options.peers().entrySet().stream()
                .map(e -> RaftPeer.newBuilder().setId(e.getKey()).setAddress(e.getValue()).build())
                .toList();
        RaftGroup group = RaftGroup.valueOf(GroupName.toGroupId(options.group()), peers);
        RaftProperties properties = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties,
                TimeDuration.valueOf(options.requestTimeout().toMillis(), TimeUnit.MILLISECONDS));
        RaftClient probe = RaftClient.newBuilder()
                .setClientId(ClientId.randomId())
                .setRaftGroup(group)
                .setProperties(properties)
                .setRetryPolicy(RetryPolicies.noRetry())
                .build();
        try {
            List<CompletableFuture<NodeStatus>> answers = options.peers().entrySet().stream()
                    .map(e -> CompletableFuture.supplyAsync(() -> statusOf(probe, group, options, e.getKey(), e.getValue())))
                    .toList();
            return answers.stream().map(CompletableFuture::join).sorted(Comparator.comparing(NodeStatus::id)).toList();
        } finally {
            try {
                probe.close();
            } catch (IOException e) {
                // Asked and answered; a failed close leaves nothing behind that matters.
            }
        }
    }

    private static NodeStatus statusOf(RaftClient raft, RaftGroup group, ClientOptions options, String id, String address) {
        RaftPeerId peer = RaftPeerId.valueOf(id);
        try {
            GroupInfoReply info = raft.getGroupManagementApi(peer).info(group.getGroupId());
            RoleInfoProto role = info.getRoleInfoProto();
            LogInfoProto log = info.getLogInfoProto();
            String self = role.getSelf().getId().toStringUtf8();
            String leader = switch (role.getRole()) {
                case LEADER -> self;
                case FOLLOWER -> role.getFollowerInfo().getLeaderInfo().getId().getId().toStringUtf8();
                default -> null;
            };
            RaftClientReply reply;
            try {
                reply = raft.async()
                        .sendStaleRead(RaftBytes.message(Codec.encodeQuery(new Query.Stats())), 0, peer)
                        .get(options.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | TimeoutException e) {
                // It answered Raft, so it is up; it cannot serve its state yet (loading, catching up).
                return new NodeStatus(self, address, NodeStatus.STARTING, leader == null || leader.isEmpty() ? null : leader,
                        log.getLastEntry().getTerm(), log.getApplied().getIndex(), log.getCommitted().getIndex(), 0, 0,
                        0, 0, null);
            }
            Result.Stats stats = (Result.Stats) Codec.decodeResults(reply.getMessage().getContent().toByteArray()).get(0);
            return new NodeStatus(self, address, role.getRole().name(), leader == null || leader.isEmpty() ? null : leader,
                    log.getLastEntry().getTerm(), log.getApplied().getIndex(), log.getCommitted().getIndex(),
                    stats.clusterTime(), stats.itemCount(), stats.usedBytes(), stats.quotaBytes(), null);
        } catch (IOException | RuntimeException e) {
            return NodeStatus.unreachable(id, address, RatchetClient.describe(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return NodeStatus.unreachable(id, address, "interrupted");
        }
    }
}
