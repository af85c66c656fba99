package io.ratchet.node;

import java.io.IOException;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.TermIndexProto;
import org.apache.ratis.proto.grpc.RaftServerProtocolServiceGrpc;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.thirdparty.io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;

/**
 * Lets a follower take an append that repeats entries it has committed: those entries leave the append
 * before Ratis sees it, and the rest is appended.
 *
 * <p>Why: Ratis 3.3.0 refuses such an append whole, new entries and all, as inconsistent ("the first entry
 * already exists", {@code RaftServerImpl.checkInconsistentAppendEntries}), naming the entry after its commit
 * index as the one to send next. Its leader ({@code GrpcLogAppender}), on any inconsistent reply, even one
 * to a request it no longer tracks, forgets every request it has in flight and sends again from the index
 * the reply names. A follower catching up (restarted or just added) has many in flight: each such reset
 * sends again entries that are already on their way, each repeat is refused again, and the resends feed
 * on themselves until the appends stop overlapping. Under load that held a restarted node's catch-up for
 * seconds; docs/DESIGN.md ("Failover") has the measurement.
 *
 * <p>Safe: an entry at or below a follower's commit index is in the log of every leader of that term or a
 * later one, with the same term (Raft's leader completeness), and the follower holds it (or its snapshot
 * does). Dropping it changes neither what the follower's log ends with nor its answer: the append's
 * previous entry becomes the last one dropped, which the follower holds, and the match index it replies is
 * the append's last entry either way. An append from a leader of an older term is refused for its term
 * as before. An append wholly committed, or whose entries do not run on one by one, goes to Ratis as it came.
 * {@code -Dratchet.node.trimCommittedEntries=false} leaves it out, for comparison.
 */
final class CommittedEntriesTrim implements ServerInterceptor {
    static final boolean ENABLED = !"false".equals(System.getProperty("ratchet.node.trimCommittedEntries"));
    private static final String APPEND_ENTRIES = RaftServerProtocolServiceGrpc.getAppendEntriesMethod().getFullMethodName();

    /** The server whose followers' logs are read; appends pass untouched until it is attached. */
    private volatile RaftServer server;

    void attach(RaftServer server) {
        this.server = server;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        ServerCall.Listener<Q> listener = next.startCall(call, headers);
        if (!APPEND_ENTRIES.equals(call.getMethodDescriptor().getFullMethodName())) {
            return listener;
        }
        return new SimpleForwardingServerCallListener<>(listener) {
            @Override
            @SuppressWarnings("unchecked")
            public void onMessage(Q message) {
                super.onMessage((Q) trim((AppendEntriesRequestProto) message));
            }
        };
    }

    private AppendEntriesRequestProto trim(AppendEntriesRequestProto append) {
        RaftServer s = server;
        if (s == null || append.getEntriesCount() == 0) {
            return append;
        }
        RaftLog log;
        try {
            // A group still loading keeps this call waiting as it would keep the append itself.
            log = s.getDivision(RaftGroupId.valueOf(append.getServerRequest().getRaftGroupId().getId())).getRaftLog();
        } catch (IOException e) {
            return append; // not a group of this server: Ratis refuses it
        }
        return trim(append, Math.max(log.getLastCommittedIndex(), log.getSnapshotIndex()));
    }

    /**
     * The append without its entries at or below {@code committed}, with the last of those as its previous
     * entry; the append itself when none is, when all are, or when its entries do not run on one by one.
     */
    static AppendEntriesRequestProto trim(AppendEntriesRequestProto append, long committed) {
        int count = append.getEntriesCount();
        if (count == 0) {
            return append;
        }
        long first = append.getEntries(0).getIndex();
        long last = append.getEntries(count - 1).getIndex();
        if (committed < first || committed >= last || last - first != count - 1) {
            return append;
        }
        int dropped = (int) (committed - first + 1);
        LogEntryProto previous = append.getEntries(dropped - 1);
        return append.toBuilder()
                .setPreviousLog(TermIndexProto.newBuilder().setTerm(previous.getTerm()).setIndex(previous.getIndex()))
                .clearEntries()
                .addAllEntries(append.getEntriesList().subList(dropped, count))
                .build();
    }
}
