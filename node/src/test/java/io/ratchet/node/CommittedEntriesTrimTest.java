package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import java.util.stream.LongStream;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.TermIndexProto;
import org.apache.ratis.server.raftlog.LogProtoUtils;
import org.junit.jupiter.api.Test;

class CommittedEntriesTrimTest {
    /** Entries 10..14, the first three of term 2 and the last two of term 3, after entry 9 of term 2. */
    private static final AppendEntriesRequestProto APPEND = AppendEntriesRequestProto.newBuilder()
            .setLeaderTerm(3)
            .setLeaderCommit(14)
            .setPreviousLog(TermIndexProto.newBuilder().setTerm(2).setIndex(9))
            .addAllEntries(LongStream.rangeClosed(10, 14).mapToObj(i -> entry(i < 13 ? 2 : 3, i)).toList())
            .build();

    @Test
    void anAppendPastTheCommitIndexGoesAsItCame() {
        assertSame(APPEND, CommittedEntriesTrim.trim(APPEND, 9));
        assertSame(APPEND, CommittedEntriesTrim.trim(APPEND, -1));
    }

    @Test
    void entriesTheFollowerCommittedLeaveTheAppendAndTheLastOfThemBecomesItsPrevious() {
        AppendEntriesRequestProto trimmed = CommittedEntriesTrim.trim(APPEND, 12);

        assertEquals(List.of(13L, 14L), trimmed.getEntriesList().stream().map(LogEntryProto::getIndex).toList());
        assertEquals(TermIndexProto.newBuilder().setTerm(2).setIndex(12).build(), trimmed.getPreviousLog());
        assertEquals(APPEND.getLeaderTerm(), trimmed.getLeaderTerm());
        assertEquals(APPEND.getLeaderCommit(), trimmed.getLeaderCommit());
    }

    @Test
    void anAppendWhollyCommittedGoesToRatisAsItCame() {
        assertSame(APPEND, CommittedEntriesTrim.trim(APPEND, 14));
        assertSame(APPEND, CommittedEntriesTrim.trim(APPEND, 20));
    }

    @Test
    void aHeartbeatOrAnAppendWithAHoleGoesAsItCame() {
        AppendEntriesRequestProto heartbeat = APPEND.toBuilder().clearEntries().build();
        assertSame(heartbeat, CommittedEntriesTrim.trim(heartbeat, 12));
        AppendEntriesRequestProto holed = APPEND.toBuilder().clearEntries().addEntries(entry(2, 10)).addEntries(entry(2, 12)).build();
        assertSame(holed, CommittedEntriesTrim.trim(holed, 10));
    }

    private static LogEntryProto entry(long term, long index) {
        return LogProtoUtils.toLogEntryProto(0, term, index);
    }
}
