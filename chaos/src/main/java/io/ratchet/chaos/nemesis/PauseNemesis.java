package io.ratchet.chaos.nemesis;

import io.ratchet.chaos.cluster.Cluster;
import io.ratchet.chaos.cluster.NodeProcess;
import java.io.IOException;
import java.util.Optional;
import java.util.Random;

/**
 * SIGSTOP of a node, SIGCONT when healed: the process freezes with its connections open, as in a long
 * GC pause or a stalled VM, then wakes up believing whatever it believed before. Half the time the
 * leader, otherwise any running node.
 */
public final class PauseNemesis implements Nemesis {
    private final Cluster cluster;

    public PauseNemesis(Cluster cluster) {
        this.cluster = cluster;
    }

    @Override
    public String name() {
        return "pause";
    }

    @Override
    public Optional<Fault> inject(Random random) throws IOException {
        Targets targets = random.nextBoolean() ? Targets.LEADER : Targets.ANY;
        Optional<NodeProcess> target = targets.pick(cluster, random);
        if (target.isEmpty()) {
            return Optional.empty();
        }
        NodeProcess node = target.get();
        String who = targets.describe(cluster, node);
        node.pause();
        return Optional.of(new Fault("pause", "paused " + who, () -> {
            node.resume();
            return "resumed " + node.id();
        }));
    }

    @Override
    public void healAll() throws IOException {
        for (NodeProcess node : cluster.nodes()) {
            node.resume();
        }
    }
}
