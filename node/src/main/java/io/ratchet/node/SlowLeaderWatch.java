package io.ratchet.node;

import io.ratchet.common.Credentials;
import io.ratchet.protocol.DaemonThreads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
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
 * busy, where handing over would only move the problem (and, repeated, flap); so it asks the voters it
 * heard from ({@link PaceRpc}) and hands over only to one whose stalled share is a third of its own or
 * less, and under the threshold, for {@link #ROUNDS} looks in a row, and not again within {@link #COOLDOWN}.
 *
 * <p>Looks every {@link #PERIOD}. The threshold is {@code -Dratchet.slow.leader.share} (default 0.3: the
 * leader waited for CPU 30 % of the last two seconds; 0 turns the watch off).
 */
final class SlowLeaderWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SlowLeaderWatch.class);
    static final String THRESHOLD_PROPERTY = "ratchet.slow.leader.share";
    static final Duration PERIOD = Duration.ofMillis(500);
    static final int ROUNDS = 2;
    static final Duration COOLDOWN = Duration.ofSeconds(5);
    private static final long HEARD_WITHIN_MILLIS = 1_000;

    private final RaftServer server;
    private final RaftGroupId groupId;
    private final PaceMeter meter;
    private final double threshold;
    private final HandOver handOver;
    private final PaceAsker pace;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-slow-leader"));
    // Touched on the timer's thread only.
    private int rounds;
    private boolean busy;
    private long lastHandOver = System.nanoTime() - COOLDOWN.toNanos();

    SlowLeaderWatch(RaftServer server, RaftGroupId groupId, PaceMeter meter, Credentials credentials) {
        this(server, groupId, meter, credentials, threshold());
    }

    /** The stalled share at which a leader counts as slow: {@code -Dratchet.slow.leader.share}, 0.3 unless set (0: never). */
    static double threshold() {
        return Double.parseDouble(System.getProperty(THRESHOLD_PROPERTY, "0.3"));
    }

    SlowLeaderWatch(RaftServer server, RaftGroupId groupId, PaceMeter meter, Credentials credentials, double threshold) {
        this.server = server;
        this.groupId = groupId;
        this.meter = meter;
        this.threshold = threshold;
        this.pace = new PaceAsker(credentials);
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
     * of {@code voters} (their shares, in order of preference), the one with the lowest share that is under
     * the threshold and at most a third of {@code own}; else none (everyone is slow: the machine is busy).
     */
    static Optional<String> choose(double own, double threshold, Map<String, Double> voters) {
        if (own < threshold) {
            return Optional.empty();
        }
        String best = null;
        for (Map.Entry<String, Double> v : voters.entrySet()) {
            double share = v.getValue();
            if (share < threshold && share <= own / 3 && (best == null || share < voters.get(best))) {
                best = v.getKey();
            }
        }
        return Optional.ofNullable(best);
    }

    private void look() {
        if (busy) {
            return;
        }
        try {
            double own = meter.stalledShare();
            RaftServer.Division division = server.getDivision(groupId);
            if (own < threshold || !division.getInfo().isLeader()) {
                rounds = 0;
                return;
            }
            List<RaftPeer> voters = new ArrayList<>();
            for (RaftPeerId id : HandOver.recentlyHeardVoters(division, HEARD_WITHIN_MILLIS)) {
                RaftPeer peer = division.getRaftConf().getPeer(id);
                if (peer != null) {
                    voters.add(peer);
                }
            }
            pace.forgetAllBut(division.getRaftConf().getAllPeers());
            busy = true;
            Map<String, CompletableFuture<Double>> asked = new LinkedHashMap<>();
            voters.forEach(peer -> asked.put(peer.getId().toString(), pace.stalledShareOf(peer.getAddress())));
            CompletableFuture.allOf(asked.values().toArray(CompletableFuture[]::new))
                    .handleAsync((done, e) -> {
                        decide(own, answered(asked));
                        return null;
                    }, timer)
                    .whenComplete((done, e) -> busy = false);
        } catch (Exception e) {
            busy = false;
            LOG.debug("slow-leader watch round failed", e);
        }
    }

    private void decide(double own, Map<String, Double> shares) {
        Optional<String> target = choose(own, threshold, shares);
        rounds = target.isPresent() ? rounds + 1 : 0;
        if (target.isEmpty() || rounds < ROUNDS || System.nanoTime() - lastHandOver < COOLDOWN.toNanos()) {
            return;
        }
        rounds = 0;
        lastHandOver = System.nanoTime();
        LOG.warn("node {} leads, but waited for CPU {}% of the last two seconds while {} waited {}% (voters: {}): "
                        + "every write waits on this node; handing leadership to {}", server.getId(), percent(own),
                target.get(), percent(shares.get(target.get())), shares, target.get());
        handOver.to(RaftPeerId.valueOf(target.get()));
    }

    private static long percent(double share) {
        return Math.round(share * 100);
    }

    /** The shares that came back; a voter that did not answer in time is left out. */
    private static Map<String, Double> answered(Map<String, CompletableFuture<Double>> asked) {
        Map<String, Double> shares = new LinkedHashMap<>();
        asked.forEach((id, f) -> {
            if (f.isDone() && !f.isCompletedExceptionally()) {
                shares.put(id, f.join());
            }
        });
        return shares;
    }

    @Override
    public void close() {
        timer.shutdownNow();
        pace.close();
    }
}
