package io.ratchet.node;

import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A leader handing leadership to another voter because it cannot lead well itself (its disk stalls,
 * {@link StalledLogWatch}; it is starved of CPU, {@link SlowLeaderWatch}): which voters it may hand to, and
 * the transfer. Ratis' transfer makes the target catch up first and then asks it to start an election at
 * once; the old leader steps down when the new one wins.
 */
final class HandOver {
    private static final Logger LOG = LoggerFactory.getLogger(HandOver.class);
    private static final long TRANSFER_MILLIS = 3_000;

    private final RaftServer server;
    private final RaftGroupId groupId;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callId = new AtomicLong();
    private final AtomicLong done = new AtomicLong();

    HandOver(RaftServer server, RaftGroupId groupId) {
        this.server = server;
        this.groupId = groupId;
    }

    /** Hand-overs started through this. */
    long started() {
        return done.get();
    }

    /**
     * The voters other than the leader it heard from within {@code withinMillis}, the most recent first;
     * empty when this node does not lead.
     */
    static List<RaftPeerId> recentlyHeardVoters(RaftServer.Division division, long withinMillis) {
        if (!division.getInfo().isLeader()) {
            return List.of();
        }
        return division.getInfo().getRoleInfoProto().getLeaderInfo().getFollowerInfoList().stream()
                .filter(f -> f.getLastRpcElapsedTimeMs() < withinMillis)
                .filter(f -> division.getRaftConf().getPeer(peerId(f), RaftPeerRole.FOLLOWER) != null)
                .sorted(Comparator.comparingLong(ServerRpcProto::getLastRpcElapsedTimeMs))
                .map(HandOver::peerId)
                .toList();
    }

    /** Asks Ratis to hand leadership to {@code target}; completes with whether it did. */
    CompletableFuture<Boolean> to(RaftPeerId target) {
        done.incrementAndGet();
        TransferLeadershipRequest request = new TransferLeadershipRequest(clientId, server.getId(), groupId,
                callId.incrementAndGet(), target, TRANSFER_MILLIS);
        try {
            return server.transferLeadershipAsync(request).handle((reply, e) -> {
                if (e != null || !reply.isSuccess()) {
                    // As text: SLF4J takes a last argument that is a Throwable for a stack trace, not the placeholder.
                    LOG.warn("node {}: handing leadership to {} failed: {}", server.getId(), target,
                            String.valueOf(e != null ? e : reply.getException()));
                    return false;
                }
                return true;
            });
        } catch (Exception e) {
            LOG.warn("node {}: handing leadership to {} failed: {}", server.getId(), target, e.toString());
            return CompletableFuture.completedFuture(false);
        }
    }

    private static RaftPeerId peerId(ServerRpcProto follower) {
        return RaftPeerId.valueOf(follower.getId().getId());
    }
}
