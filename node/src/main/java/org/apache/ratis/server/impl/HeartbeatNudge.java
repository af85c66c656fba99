package org.apache.ratis.server.impl;

import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.LogAppender;

/**
 * Asks a leader's log appenders for a heartbeat now, for a race in Ratis 3.3.0 (in this package because the
 * leader's appenders are package-private there). A linearizable read on the leader without a lease waits for
 * a heartbeat round that a majority acknowledges with call ids at or after the read's
 * ({@code ReadIndexHeartbeats}). The read sets each appender's heartbeat trigger; but an append built just
 * before (its call id taken) and sent just after clears that trigger as it goes ({@code
 * GrpcLogAppender.sendRequest} → {@code resetHeartbeatTrigger}), its reply is too early to count, and the
 * read then waits for the next entry or the periodic heartbeat (half the minimum election timeout). Setting
 * the trigger again after that send lets the heartbeat go.
 */
public final class HeartbeatNudge {
    private HeartbeatNudge() {
    }

    /**
     * Triggers a heartbeat on every appender of {@code division} while it leads.
     *
     * @return whether it leads (a follower has no appenders: nothing was done)
     */
    public static boolean nudge(RaftServer.Division division) {
        return ((RaftServerImpl) division).getRole().getLeaderState()
                .map(leader -> {
                    leader.getLogAppenders().forEach(LogAppender::triggerHeartbeat);
                    return true;
                })
                .orElse(false);
    }
}
