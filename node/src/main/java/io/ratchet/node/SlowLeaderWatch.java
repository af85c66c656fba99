package io.ratchet.node;

import io.ratchet.node.metrics.RaftState;
import io.ratchet.protocol.DaemonThreads;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * On the leader: when it is starved of CPU and another voter is not, hands leadership to that voter. A
 * leader held back (by a CPU quota, a hypervisor, GC) still sends heartbeats in time, so no election
 * comes, yet every write waits on it: with a 10 % CPU quota the cluster answered 0.42× as many writes at
 * 10× the latency. Its own {@link PaceMeter} alone cannot tell that from a machine everyone shares being
 * busy, where handing over would only move the problem (and, repeated, flap); so it asks the voters that
 * answer ({@link PaceRpc}) and hands over only to one whose stalled share is a third of its own or less
 * and under the threshold (the furthest in the log of those), and not again within {@link #COOLDOWN}.
 *
 * <p>Fast, because a writer waits the whole time: it looks every {@link #PERIOD}, over the last second
 * of the meter, and only while the last quarter second was starved too (a single pause the second
 * still holds is over, and no reason to hand over). And it decides on answers it already has: while it
 * leads it has its voters asked every {@link PaceAsker#REFRESH} (one {@link PaceAsker} for every group of
 * the node), and uses answers up to {@link #FRESH} old, since a
 * question a starved node asks comes back seconds late (2 s under a 10 % quota). Two looks 500 ms apart
 * over two seconds, each asking then, handed over 1.5 to 3.3 s into a 10 % quota, and the writers' gap
 * with the election after it was over 2 s; now about 0.6 s. It hands nothing over in the node's first
 * {@link #START_UP}. The threshold is
 * {@code -Dratchet.slow.leader.share} (default 0.3: the leader waited for CPU 30 % of the last second; 0
 * turns the watch off).
 */
final class SlowLeaderWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SlowLeaderWatch.class);
    static final String THRESHOLD_PROPERTY = "ratchet.slow.leader.share";
    static final Duration PERIOD = Duration.ofMillis(100);
    /** How long a voter's answer counts: a starved leader's own questions come back late, if at all. */
    static final Duration FRESH = Duration.ofSeconds(3);
    /** How long a voter's pace answer may take. */
    static final long ASK_MILLIS = 1_000;
    static final Duration COOLDOWN = Duration.ofSeconds(5);
    /**
     * How long after the node starts the watch hands nothing over. A JVM that has just started spends its
     * first seconds compiling its own code, beside the other nodes doing the same: its stalled share then
     * measures its start, not its machine, and the voter it would hand to has never led (its first time
     * as leader is slow too, docs/DESIGN.md "Failover"). In chaos runs on a fresh cluster the watch handed
     * over 8 to 11 s after the JVMs started (the leader at 32 %, a voter at 5 %), and writers then waited
     * up to 3.7 s for the group, long enough to lose a 5 s lease taken just before.
     */
    static final Duration START_UP = Duration.ofSeconds(15);
    /**
     * Voters heard from within this are asked. Wide, because a starved leader handles its followers'
     * answers late too, so a second would leave out live voters just when they are needed; a voter that is
     * down does not answer the pace question and is left out there.
     */
    private static final long HEARD_WITHIN_MILLIS = 5_000;

    private final RaftServer server;
    private final RaftGroupId groupId;
    private final PaceMeter meter;
    private final double threshold;
    private final HandOver handOver;
    private final PaceAsker pace;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-slow-leader"));
    // Touched on the timer's thread only.
    /** No hand-over before this: the node's start-up, then each hand-over's cooldown. */
    private long quietUntil = System.nanoTime() + START_UP.toNanos();

    /** {@code pace} is the node's, shared with its other groups' watches; closing this leaves it open. */
    SlowLeaderWatch(RaftServer server, RaftGroupId groupId, PaceMeter meter, PaceAsker pace) {
        this(server, groupId, meter, pace, threshold());
    }

    /** The stalled share at which a leader counts as slow: {@code -Dratchet.slow.leader.share}, 0.3 unless set (0: never). */
    static double threshold() {
        return Double.parseDouble(System.getProperty(THRESHOLD_PROPERTY, "0.3"));
    }

    SlowLeaderWatch(RaftServer server, RaftGroupId groupId, PaceMeter meter, PaceAsker pace, double threshold) {
        this.server = server;
        this.groupId = groupId;
        this.meter = meter;
        this.threshold = threshold;
        this.pace = pace;
        this.handOver = new HandOver(server, groupId);
        if (threshold > 0) {
            timer.scheduleWithFixedDelay(this::look, PERIOD.toMillis(), PERIOD.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Hand-overs this node started because it was starved of CPU and a voter was not. */
    long handedOver() {
        return handOver.started();
    }

    /**
     * The voter to hand to, when the leader's stalled share {@code own} is at or over {@code threshold}:
     * of {@code voters} (their shares, the furthest in the log first), the first whose share is under the
     * threshold and at most a third of {@code own}; else none (everyone is slow: the machine is busy). The
     * furthest, because Ratis' transfer first waits for the target to hold the leader's last entry, and on
     * a starved leader that wait took 1.5 s where a voter that already held it stood at once.
     */
    static Optional<String> choose(double own, double threshold, Map<String, Double> voters) {
        if (own < threshold) {
            return Optional.empty();
        }
        for (Map.Entry<String, Double> v : voters.entrySet()) {
            double share = v.getValue();
            if (share < threshold && share <= own / 3) {
                return Optional.of(v.getKey());
            }
        }
        return Optional.empty();
    }

    private void look() {
        try {
            RaftServer.Division division = server.getDivision(groupId);
            if (!RaftState.leads(division)) {
                return;
            }
            long now = System.nanoTime();
            ask(division);
            if (now - quietUntil < 0) {
                return;
            }
            double own = meter.stalledShare();
            if (own < threshold) {
                return; // the usual case, decided without asking Ratis for the voters
            }
            Map<String, PaceAsker.Answer> voters = new LinkedHashMap<>();
            for (RaftPeerId id : HandOver.recentlyHeardVoters(division, HEARD_WITHIN_MILLIS)) {
                RaftPeer peer = division.getRaftConf().getPeer(id);
                if (peer != null) {
                    pace.recent(peer.getAddress()).ifPresent(answer -> voters.put(id.toString(), answer));
                }
            }
            target(own, meter.recentStalledShare(), threshold, voters, now).ifPresent(to -> handOver(own, to, voters));
        } catch (Exception e) {
            LOG.debug("slow-leader watch round failed", e);
        }
    }

    /** Has every voter heard from lately asked its share (the asker asks each once per {@link PaceAsker#REFRESH}). */
    private void ask(RaftServer.Division division) throws IOException {
        pace.forgetAllBut(membersOfEveryGroup());
        for (RaftPeerId id : HandOver.recentlyHeardVoters(division, HEARD_WITHIN_MILLIS)) {
            RaftPeer peer = division.getRaftConf().getPeer(id);
            if (peer != null) {
                pace.refresh(peer.getAddress(), ASK_MILLIS);
            }
        }
    }

    /**
     * The voter to hand to now: none unless the leader's share of the last second {@code own} and of the
     * last quarter {@code recent} are both at or over {@code threshold}; then {@link #choose} among the
     * {@code voters}' answers heard within {@link #FRESH} of {@code now}.
     */
    static Optional<String> target(double own, double recent, double threshold, Map<String, PaceAsker.Answer> voters, long now) {
        if (own < threshold || recent < threshold) {
            return Optional.empty();
        }
        Map<String, Double> fresh = new LinkedHashMap<>();
        voters.forEach((id, h) -> {
            if (now - h.at() <= FRESH.toNanos()) {
                fresh.put(id, h.share());
            }
        });
        return choose(own, threshold, fresh);
    }

    /**
     * The members of every group on this node: the asker is the node's, and a member one group has added
     * and another not yet (a membership change goes group by group) keeps its channel.
     */
    private List<RaftPeer> membersOfEveryGroup() throws IOException {
        List<RaftPeer> members = new ArrayList<>();
        for (RaftGroupId id : server.getGroupIds()) {
            members.addAll(server.getDivision(id).getRaftConf().getAllPeers());
        }
        return members;
    }

    private void handOver(double own, String target, Map<String, PaceAsker.Answer> voters) {
        quietUntil = System.nanoTime() + COOLDOWN.toNanos();
        LOG.warn("node {} leads, but waited for CPU {}% of the last second while {} waited {}% (voters: {}): "
                        + "every write waits on this node; handing leadership to {}", server.getId(), percent(own),
                target, percent(voters.get(target).share()), voters, target);
        handOver.toOrStepDown(RaftPeerId.valueOf(target));
    }

    private static long percent(double share) {
        return Math.round(share * 100);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
