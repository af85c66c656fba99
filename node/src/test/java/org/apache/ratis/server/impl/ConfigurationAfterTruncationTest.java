package org.apache.ratis.server.impl;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.node.FreePorts;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.LogProtoUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Ratis 3.3.0 defect {@link LogConfigurations} mends, played on a real node: one follower, its two
 * peers stood in for by append requests made here (its election timeout is too long for it to stand
 * meanwhile). An old leader leaves entries only this follower has; a new leader's entries conflict with
 * them, and the first of those adds a member. Without the mending the follower ends on the old
 * configuration although its log holds the new one.
 */
class ConfigurationAfterTruncationTest {
    private long callId;

    @Test
    void aConflictingAppendKeepsTheConfigurationItCarries(@TempDir Path dir) throws Exception {
        try (LoneFollower lone = LoneFollower.start(dir, Duration.ofSeconds(120), Duration.ofSeconds(180))) {
            RaftServerImpl follower = lone.follower();
            RaftConfigurationImpl initial = follower.getRaftConf();
            RaftPeerId n4 = RaftPeerId.valueOf("n4");
            assertFalse(initial.containsInConf(n4));

            // n2 leads term 1 and reaches only n1 with entries 0..2.
            AppendEntriesReplyProto first = append(follower, "n2", 1, null,
                    List.of(metadata(1, 0), metadata(1, 1), metadata(1, 2)));
            assertEquals(AppendEntriesReplyProto.AppendResult.SUCCESS, first.getResult());

            // n3 leads term 2 from index 1 on; its entry 1 makes n4 a member.
            List<RaftPeer> grown = new ArrayList<>(initial.getAllPeers());
            grown.add(RaftPeer.newBuilder().setId(n4).setAddress("127.0.0.1:" + FreePorts.next()).build());
            RaftConfigurationImpl withN4 = RaftConfigurationImpl.newBuilder().setConf(grown).setLogEntryIndex(1).build();
            AppendEntriesReplyProto second = append(follower, "n3", 2, TermIndex.valueOf(1, 0),
                    List.of(LogProtoUtils.toLogEntryProto(withN4, 2L, 1), metadata(2, 2)));
            assertEquals(AppendEntriesReplyProto.AppendResult.SUCCESS, second.getResult());

            LogEntryProto entry1 = follower.getState().getLog().get(1);
            assertEquals(2, entry1.getTerm(), "the conflicting entry was replaced");
            assertTrue(entry1.hasConfigurationEntry());
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertTrue(follower.getRaftConf().containsInConf(n4),
                        "the follower runs on the configuration its log holds: " + follower.getRaftConf());
                assertEquals(1, follower.getRaftConf().getLogEntryIndex());
            });
        }
    }

    private AppendEntriesReplyProto append(RaftServerImpl follower, String leader, long term, TermIndex previous,
                                           List<LogEntryProto> entries) throws Exception {
        RaftGroupMemberId leaderId = RaftGroupMemberId.valueOf(RaftPeerId.valueOf(leader), follower.getMemberId().getGroupId());
        return follower.appendEntriesAsync(ServerProtoUtils.toAppendEntriesRequestProto(leaderId, follower.getId(), term,
                entries, 0, false, previous, List.of(), ++callId, null)).get();
    }

    private static LogEntryProto metadata(long term, long index) {
        return LogProtoUtils.toLogEntryProto(0, term, index);
    }
}
