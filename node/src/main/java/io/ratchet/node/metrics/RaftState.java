package io.ratchet.node.metrics;

import io.ratchet.common.Readiness;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;

/**
 * What this node's Raft division says of itself at one moment: role, term, leader, membership and log
 * indexes, read from Ratis without a lock (each figure is current, together they may be a moment apart).
 *
 * @param role         LEADER, FOLLOWER, CANDIDATE or LISTENER
 * @param leader       the leader this node knows (itself when it leads), or null
 * @param member       whether the group's configuration holds this node, as a voter or a listener
 * @param commitIndex  the last index this node knows is committed
 * @param appliedIndex the last index its state machine applied
 */
public record RaftState(RaftPeerRole role, long term, String leader, boolean member, long commitIndex,
                        long appliedIndex) {

    public static RaftState of(RaftServer.Division division) {
        var info = division.getInfo();
        RaftPeerId leader = info.getLeaderId();
        boolean member = division.getRaftConf().getPeer(division.getId(), RaftPeerRole.FOLLOWER,
                RaftPeerRole.LISTENER) != null;
        return new RaftState(info.getCurrentRole(), info.getCurrentTerm(), leader == null ? null : leader.toString(),
                member, division.getRaftLog().getLastCommittedIndex(), info.getLastAppliedIndex());
    }

    /**
     * Whether this node leads the group and still serves it. Ratis closes a leader's division once a
     * configuration without it commits (it was removed), and the closed division goes on calling itself the
     * leader for as long as the node runs: every question "do I lead?" asks here, not {@code isLeader()}.
     */
    public static boolean leads(RaftServer.Division division) {
        var info = division.getInfo();
        return info.isLeader() && info.isAlive();
    }

    /** Ready to take traffic, by the rule {@code ratchet status} shares. */
    public Readiness readiness() {
        return new Readiness(member, leader, appliedIndex, commitIndex);
    }
}
