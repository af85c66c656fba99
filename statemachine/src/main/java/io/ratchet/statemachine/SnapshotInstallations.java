package io.ratchet.statemachine;

import java.io.IOException;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotReplyProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto.NotificationProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotResult;
import org.apache.ratis.proto.RaftProtos.RaftGroupIdProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.RaftServerProtocol;
import org.apache.ratis.server.protocol.TermIndex;

/**
 * Finishes a snapshot installation the state machine has done, for a defect of Ratis 3.3.0. A follower told
 * to install a snapshot hands the work to the state machine and, when the state machine is done, waits for
 * the leader's <em>next</em> notification to load it ({@code SnapshotInstallationHandler}); until then it
 * refuses every append, answering with its own log's next index. The leader notifies again only while
 * that index is below the start of its log. So when the first notification came from a passing view
 * (a follower whose log conflicts with the leader's answers with its commit index, which may be below the
 * leader's log, while its log reaches past it), the leader takes the later answers, sends appends from
 * there, and never notifies again: the follower refuses appends until leadership changes. In a chaos run this
 * left a follower of a group unable to append for 22 s, and a second fault in that time stopped the group.
 * <p>
 * {@link #finish} asks the server what the leader's next notification would: the same leader, term and
 * first index, through the server's own install entry point, which loads the installed snapshot and ends
 * the installation exactly as that notification does. Nothing else is told: no configuration, no new
 * term. When the installation was already finished the server answers that the snapshot is installed.
 */
public final class SnapshotInstallations {
    private SnapshotInstallations() {
    }

    /**
     * Ends the installation at {@code firstAvailable} the state machine has finished, as the leader's next
     * notification would; only while the server follows a known leader in its current term, whose name it
     * uses.
     *
     * @return the server's answer: {@code SNAPSHOT_INSTALLED} or {@code ALREADY_INSTALLED} when the
     *     installation is over, {@code IN_PROGRESS} when Ratis has not yet heard that the state machine
     *     is done; {@code NOT_LEADER} when the server follows no leader now (ask again later)
     */
    static InstallSnapshotResult finish(RaftServer.Division division, TermIndex firstAvailable) throws IOException {
        RaftPeerId leader;
        long term;
        // Read together under the server's own lock, which its term and leader change under: a leader is
        // named only for the term it leads (naming it for a later term would make it that term's leader here).
        synchronized (division) {
            leader = division.getInfo().isFollower() ? division.getInfo().getLeaderId() : null;
            term = division.getInfo().getCurrentTerm();
        }
        if (leader == null) {
            return InstallSnapshotResult.NOT_LEADER;
        }
        // The server's own entry point for its peers' install requests (RaftServerImpl implements it).
        InstallSnapshotReplyProto reply = ((RaftServerProtocol) division).installSnapshot(
                notification(division, leader, term, firstAvailable));
        return reply.getResult();
    }

    /**
     * The notification to install a snapshot that {@code leader}, leading in {@code term}, sends the member
     * {@code to} whose next entry its log no longer holds: its first index is {@code firstAvailable}.
     */
    public static InstallSnapshotRequestProto notification(RaftServer.Division to, RaftPeerId leader, long term,
                                                           TermIndex firstAvailable) {
        return InstallSnapshotRequestProto.newBuilder()
                .setServerRequest(RaftRpcRequestProto.newBuilder()
                        .setRequestorId(leader.toByteString())
                        .setReplyId(to.getId().toByteString())
                        .setRaftGroupId(RaftGroupIdProto.newBuilder().setId(to.getGroup().getGroupId().toByteString())))
                .setLeaderTerm(term)
                .setNotification(NotificationProto.newBuilder().setFirstAvailableTermIndex(firstAvailable.toProto()))
                .build();
    }
}
