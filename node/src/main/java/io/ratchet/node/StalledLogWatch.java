package io.ratchet.node;

import io.ratchet.node.metrics.RaftState;
import io.ratchet.protocol.DaemonThreads;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * On the leader: when its own Raft log holds entries it has not managed to flush for {@link #timeout},
 * hands leadership to the voter it heard from most recently. Ratis commits nothing past the leader's own
 * flushed index ({@code RaftLogBase.updateCommitIndex} takes the lower of the majority's index and the
 * leader's), so a leader whose disk stalls holds up every write of the cluster however fast the others
 * are; a follower that stalls costs nothing, since the others are a majority. After a hand-over the
 * follower takes over within one round of messages, and the writes the old leader had sent it commit
 * there (clients resend through their sessions, which apply each write once).
 *
 * <p>Looks every {@link #PERIOD}; the timeout is {@code -Dratchet.log.stall.timeout.ms} (default 1000;
 * 0 turns the watch off): longer than a healthy fsync under load takes, short enough that writes stop
 * for no more than about a second and a half.
 */
final class StalledLogWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StalledLogWatch.class);
    static final String TIMEOUT_PROPERTY = "ratchet.log.stall.timeout.ms";
    static final Duration PERIOD = Duration.ofMillis(100);

    private final RaftServer server;
    private final RaftGroupId groupId;
    private final Duration timeout;
    private final HandOver handOver;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-stalled-log"));
    private long lastFlushed = -1;
    private long stalledSince = -1;
    private volatile boolean transferring;

    StalledLogWatch(RaftServer server, RaftGroupId groupId) {
        this(server, groupId, Duration.ofMillis(Long.getLong(TIMEOUT_PROPERTY, 1_000)));
    }

    StalledLogWatch(RaftServer server, RaftGroupId groupId, Duration timeout) {
        this.server = server;
        this.groupId = groupId;
        this.timeout = timeout;
        this.handOver = new HandOver(server, groupId);
        if (!timeout.isZero()) {
            timer.scheduleWithFixedDelay(this::look, PERIOD.toMillis(), PERIOD.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Hand-overs this node started because its log stalled. */
    long handedOver() {
        return handOver.started();
    }

    private void look() {
        try {
            RaftServer.Division division = server.getDivision(groupId);
            if (!RaftState.leads(division)) {
                stalledSince = -1;
                return;
            }
            RaftLog log = division.getRaftLog();
            TermIndex last = log.getLastEntryTermIndex();
            long flushed = log.getFlushIndex();
            long now = System.nanoTime();
            if (last == null || flushed >= last.getIndex() || flushed != lastFlushed) {
                lastFlushed = flushed;
                stalledSince = last == null || flushed >= last.getIndex() ? -1 : now;
                return;
            }
            if (stalledSince < 0) {
                stalledSince = now;
            }
            long stalledMillis = TimeUnit.NANOSECONDS.toMillis(now - stalledSince);
            if (stalledMillis < timeout.toMillis() || transferring) {
                return;
            }
            List<RaftPeerId> heard = HandOver.recentlyHeardVoters(division, timeout.toMillis());
            if (heard.isEmpty()) {
                return;
            }
            RaftPeerId target = heard.get(0);
            transferring = true;
            LOG.warn("node {} leads, but its log has not been flushed for {} ms (written to {}, flushed to {}): its disk "
                    + "stalls, and every write waits for it; handing leadership to {}", server.getId(), stalledMillis,
                    last.getIndex(), flushed, target);
            handOver.toOrStepDown(target).whenComplete((done, e) -> transferring = false);
        } catch (Exception e) {
            transferring = false;
            LOG.debug("stalled-log watch round failed", e);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
