package io.ratchet.node;

import io.ratchet.node.metrics.RaftState;
import java.util.Comparator;
import java.util.ArrayList;
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
 * once; the old leader steps down when the new one wins. Ratis refuses a transfer while a configuration
 * change is under way (RaftServerImpl.transferLeadershipAsync: not stable, staging, or not committed),
 * which lasts as long as a new member takes to catch up, tens of seconds; {@link #toOrStepDown} then steps
 * down, and the voters elect one of themselves after an election timeout.
 */
final class HandOver {
    private static final Logger LOG = LoggerFactory.getLogger(HandOver.class);
    /**
     * How long a transfer may hold the group's writes (Ratis refuses them until the target has won) before
     * the leader gives up and steps down instead. In an hour's chaos soak at four groups, 136 of 141 such
     * hand-overs ended within 1.3 s, most within 0.3 s, four within 2.5 s; one whose target was killed
     * 60 ms after it was chosen held the group for the whole 3 s Ratchet allowed then, and a renewed lock
     * was lost to it. Past this, stepping down and an election (0.3-0.6 s) is the quicker way to a leader.
     */
    static final long TRANSFER_MILLIS = 1_500;

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

    /** A follower as the leader sees it: when it last answered, and how far its log matches the leader's. */
    record Follower(RaftPeerId id, long lastRpcElapsedMillis, long matchIndex) {}

    /**
     * The voters other than the leader it heard from within {@code withinMillis}, the furthest in the log
     * first (then the most recently heard); empty when this node does not lead. A transfer to a voter that
     * lags waits for it to catch up, and the leader refuses writes while it waits, so the furthest is the
     * cheapest target.
     */
    static List<RaftPeerId> recentlyHeardVoters(RaftServer.Division division, long withinMillis) {
        return heard(voters(division), withinMillis);
    }

    /** The voters heard within {@code withinMillis}, as {@link #recentlyHeardVoters} orders them. */
    static List<RaftPeerId> heard(List<Follower> voters, long withinMillis) {
        return voters.stream()
                .filter(f -> f.lastRpcElapsedMillis() < withinMillis)
                .sorted(Comparator.comparingLong((Follower f) -> -f.matchIndex())
                        .thenComparingLong(Follower::lastRpcElapsedMillis))
                .map(Follower::id)
                .toList();
    }

    /**
     * Of {@link #heard}, those whose log holds every entry up to {@code committed}: a transfer to one of them
     * starts its election at once, while one to a voter still catching up (a node just restarted) keeps the
     * group's writes refused until it has caught up or the transfer times out.
     */
    static List<RaftPeerId> caughtUp(List<Follower> voters, long withinMillis, long committed) {
        return heard(voters.stream().filter(f -> f.matchIndex() >= committed).toList(), withinMillis);
    }

    /**
     * The leader's voting followers; empty when this node does not lead. Ratis gives the match indices as
     * an array in the order of its log appenders, the order the role info lists the followers in; when the
     * two calls see different appenders (a configuration change between them), every index is taken as -1,
     * so none counts as caught up.
     */
    static List<Follower> voters(RaftServer.Division division) {
        if (!RaftState.leads(division)) {
            return List.of();
        }
        List<ServerRpcProto> followers = division.getInfo().getRoleInfoProto().getLeaderInfo().getFollowerInfoList();
        long[] indices = division.getInfo().getFollowerMatchIndices();
        List<Follower> voters = new ArrayList<>(followers.size());
        for (int i = 0; i < followers.size(); i++) {
            RaftPeerId id = peerId(followers.get(i));
            if (division.getRaftConf().getPeer(id, RaftPeerRole.FOLLOWER) != null) {
                long matched = indices.length == followers.size() ? indices[i] : -1;
                voters.add(new Follower(id, followers.get(i).getLastRpcElapsedTimeMs(), matched));
            }
        }
        return voters;
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

    /**
     * As {@link #to}; when the transfer fails (refused during a configuration change, or timed out) and this
     * node still leads, steps down instead. Completes with whether either went through.
     */
    CompletableFuture<Boolean> toOrStepDown(RaftPeerId target) {
        return to(target).thenCompose(done -> done || !leads() ? CompletableFuture.completedFuture(done) : stepDown());
    }

    private boolean leads() {
        try {
            return RaftState.leads(server.getDivision(groupId));
        } catch (Exception e) {
            return false;
        }
    }

    /** Asks Ratis to step this leader down (a transfer to nobody); completes with whether it did. */
    CompletableFuture<Boolean> stepDown() {
        LOG.warn("node {}: stepping down instead, so that the voters elect a leader among themselves", server.getId());
        TransferLeadershipRequest request = new TransferLeadershipRequest(clientId, server.getId(), groupId,
                callId.incrementAndGet(), null, TRANSFER_MILLIS);
        try {
            return server.transferLeadershipAsync(request).handle((reply, e) -> {
                if (e != null || !reply.isSuccess()) {
                    LOG.warn("node {}: stepping down failed: {}", server.getId(), String.valueOf(e != null ? e : reply.getException()));
                    return false;
                }
                return true;
            });
        } catch (Exception e) {
            LOG.warn("node {}: stepping down failed: {}", server.getId(), e.toString());
            return CompletableFuture.completedFuture(false);
        }
    }

    private static RaftPeerId peerId(ServerRpcProto follower) {
        return RaftPeerId.valueOf(follower.getId().getId());
    }
}
