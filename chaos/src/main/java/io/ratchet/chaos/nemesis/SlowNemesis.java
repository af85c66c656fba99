package io.ratchet.chaos.nemesis;

import io.ratchet.chaos.cluster.Cluster;
import io.ratchet.chaos.cluster.CpuThrottle;
import io.ratchet.chaos.cluster.NodeProcess;
import java.io.IOException;
import java.util.Optional;
import java.util.Random;

/**
 * A slow machine: the leader (half the time) or any node held to {@link #PERCENT}% of one core through a
 * control group of its own, as a VM its neighbours starve. It still answers, late; the others must go on
 * at their own speed. The node is {@linkplain NodeProcess#claim() claimed} while slowed.
 */
public final class SlowNemesis implements Nemesis {
    static final int PERCENT = 10;

    private final Cluster cluster;
    private final CpuThrottle cpu;

    public SlowNemesis(Cluster cluster, CpuThrottle cpu) {
        this.cluster = cluster;
        this.cpu = cpu;
    }

    @Override
    public String name() {
        return "slow";
    }

    @Override
    public Optional<Fault> inject(Random random) throws IOException {
        return Targets.either(random).claimOne(cluster, random, (node, who) -> {
            cpu.limit(node.id(), node.pid(), PERCENT);
            return new Fault("slow", "held " + who + " to " + PERCENT + "% of a core", () -> {
                cpu.release(node.id());
                return node.id() + " has its CPU again";
            });
        });
    }

    /** Lifts every limit and removes the control groups: the run's end. */
    @Override
    public void healAll() throws IOException {
        for (NodeProcess node : cluster.nodes()) {
            cpu.release(node.id());
        }
        cpu.close();
    }
}
