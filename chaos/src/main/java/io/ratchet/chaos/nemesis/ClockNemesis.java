package io.ratchet.chaos.nemesis;

import io.ratchet.chaos.cluster.Cluster;
import io.ratchet.chaos.cluster.NodeFaults;
import io.ratchet.chaos.cluster.NodeProcess;
import java.io.IOException;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;

/**
 * Steps one node's wall clock by one to five minutes, ahead or back (the leader half the time), and steps it
 * back to true time when healed: an operator's {@code date -s}, an NTP server gone wrong, a VM restored
 * from a snapshot. Leases, ttls and session expiry are judged on cluster time, which the leader stamps; the
 * lock checker sees any lease that ends early on the harness' clock as two holders at once.
 *
 * <p>The node is {@linkplain NodeProcess#claim() claimed} while its clock is off, so a membership change
 * never starts it afresh meanwhile: a node trusts its wall clock as it finds it at its start (the skew
 * assumption, docs/RECIPES.md, "Clocks"), which a node started on a stepped clock would break.
 */
public final class ClockNemesis implements Nemesis {
    static final int MIN_STEP_S = 60;
    static final int MAX_STEP_S = 300;

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

    @Override
    public void healAll() throws IOException {
        for (NodeProcess node : cluster.nodes()) {
            faults.stepClock(node.id(), 0);
        }
    }
}
