package org.apache.ratis.server.impl;

import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.LogProtoUtils;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.raftlog.RaftLogIOException;

/**
 * Puts a server's configuration back in line with its log, for a defect of Ratis 3.3.0 (in this package
 * because what it mends is package-private there). A follower handed entries that conflict with its log
 * first takes the configurations among them ({@code ServerState.updateConfiguration}), then appends
 * them, and the append, truncating the conflicting entries, drops every configuration from the first
 * truncated index on ({@code notifyTruncatedLogEntry} → {@code ServerState.truncate}): the new ones too.
 * The follower is left on an older configuration than its log holds, and if it is elected its first
 * entry writes that older configuration back, a member change undone without anyone asking. Raft wants
 * a server to use the latest configuration in its log, committed or not; {@link #restore} makes it so.
 */
public final class LogConfigurations {
    private LogConfigurations() {
    }

    /**
     * Re-adds, in log order, the configuration entries the log holds from {@code fromIndex} on that are
     * newer than the server's current configuration; changes nothing when there are none. Reading the log
     * waits for an append under way, whose entries are then read too.
     *
     * @return the indexes of the configurations put back (empty when the server was in line)
     */
    public static List<Long> restore(RaftServer.Division division, long fromIndex) throws RaftLogIOException {
        ServerState state = ((RaftServerImpl) division).getState();
        RaftLog log = state.getLog();
        List<Long> restored = new ArrayList<>();
        TermIndex last = log.getLastEntryTermIndex();
        for (long i = Math.max(fromIndex, log.getStartIndex()); last != null && i <= last.getIndex(); i++) {
            LogEntryProto entry = log.get(i);
            if (entry != null && entry.hasConfigurationEntry() && i > state.getRaftConf().getLogEntryIndex()) {
                state.setRaftConf(LogProtoUtils.toRaftConfiguration(entry));
                restored.add(i);
            }
        }
        return restored;
    }
}
