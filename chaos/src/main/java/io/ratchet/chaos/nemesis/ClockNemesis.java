package io.ratchet.chaos.nemesis;

import io.ratchet.chaos.cluster.Cluster;
import io.ratchet.client.ClusterAdmin;
import io.ratchet.chaos.cluster.NodeFaults;
import io.ratchet.chaos.cluster.NodeProcess;
import java.io.IOException;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;

/**
 * Two faults of a node's wall clock, half the time each; the clock is stepped back to true time when healed.
 * <ul>
 *   <li>Steps a running node's clock one to five minutes ahead or back (the leader half the time): an
 *       operator's {@code date -s}, an NTP server gone wrong, a VM restored from a snapshot.
 *   <li>Restarts any node on a clock {@value #MIN_START_AHEAD_S} to {@value #MAX_START_AHEAD_S} s ahead and makes
 *       it the leader: a VM that booted before its clock was synced, or a host whose clock stepped between
 *       two of its nodes' starts (a 20-minute soak lost leases so). Its stamps must carry cluster time on from
 *       the old leader's, not jump to its own clock.
 * </ul>
 * Leases, ttls and session expiry are judged on cluster time, which the leader stamps; the lock checker sees
 * any lease that ends early on the harness' clock as two holders at once. The node is {@linkplain
 * NodeProcess#claim() claimed} while its clock is off, so no other nemesis acts on it meanwhile.
 */
public final class ClockNemesis implements Nemesis {
    static final int MIN_STEP_S = 60;
    static final int MAX_STEP_S = 300;
    static final int MIN_START_AHEAD_S = 5;
    static final int MAX_START_AHEAD_S = 30;

    private final Cluster cluster;
    private final NodeFaults faults;

    public ClockNemesis(Cluster cluster) {
        this.cluster = cluster;
        this.faults = cluster.faults();
    }

    @Override
    public String name() {
        return "clock";
    }

    @Override
    public Optional<Fault> inject(Random random) throws IOException {
        if (random.nextBoolean()) {
            return startedAhead(random);
        }
        return Targets.either(random).claimOne(cluster, random, (node, who) -> {
            long step = (MIN_STEP_S + random.nextInt(MAX_STEP_S - MIN_STEP_S + 1)) * (random.nextBoolean() ? 1L : -1L);
            faults.stepClock(node.id(), step);
            return new Fault("clock", String.format(Locale.ROOT, "stepped the clock of %s %d s %s",
                    who, Math.abs(step), step > 0 ? "ahead" : "back"), () -> {
                faults.stepClock(node.id(), 0);
                return "the clock of " + node.id() + " back to true time";
            });
        });
    }

    private Optional<Fault> startedAhead(Random random) throws IOException {
        return Targets.ANY.claimOne(cluster, random, (node, who) -> {
            long step = MIN_START_AHEAD_S + random.nextInt(MAX_START_AHEAD_S - MIN_START_AHEAD_S + 1);
            faults.stepClock(node.id(), step);
            node.kill();
            node.start();
            String caughtUp;
            try {
                caughtUp = cluster.awaitCaughtUp(node, KillNemesis.CATCH_UP);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while " + node.id() + " caught up", e);
            }
            String led;
            try (ClusterAdmin admin = cluster.openAdmin()) {
                admin.transferLeadership(node.id());
                led = "made it the leader";
            } catch (RuntimeException e) {
                led = "could not make it the leader: " + e.getMessage();
            }
            return new Fault("clock", String.format(Locale.ROOT, "restarted %s on a clock %d s ahead; %s; %s",
                    who, step, caughtUp, led), () -> {
                faults.stepClock(node.id(), 0);
                return "the clock of " + node.id() + " back to true time";
            });
        });
    }

    @Override
    public void healAll() throws IOException {
        for (NodeProcess node : cluster.nodes()) {
            faults.stepClock(node.id(), 0);
        }
    }
}
