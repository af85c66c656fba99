package io.ratchet.chaos.nemesis;

import io.ratchet.chaos.cluster.Cluster;
import io.ratchet.chaos.cluster.NodeProcess;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;

/**
 * kill -9 of a node (the leader, or any), which restarts when healed: it recovers from its own disk and
 * catches up from the others. The heal ends once the node has caught up (or {@link #CATCH_UP} passed), so
 * the quiet spell before the next fault starts with the whole cluster serving: each fault is a single fault,
 * and a gap measured after it is that fault's (a node takes seconds to start, longer with many groups). Acknowledged writes must survive it. The node is {@linkplain
 * NodeProcess#claim() claimed} from the kill to the restart, so a membership nemesis running at the
 * same time leaves it alone.
 */
public final class KillNemesis implements Nemesis {
    /** The longest a heal waits for the restarted node to catch up. */
    static final Duration CATCH_UP = Duration.ofSeconds(30);

    private final Cluster cluster;
    private final Targets targets;

    private KillNemesis(Cluster cluster, Targets targets) {
        this.cluster = cluster;
        this.targets = targets;
    }

    public static KillNemesis leader(Cluster cluster) {
        return new KillNemesis(cluster, Targets.LEADER);
    }

    public static KillNemesis any(Cluster cluster) {
        return new KillNemesis(cluster, Targets.ANY);
    }

    @Override
    public String name() {
        return targets == Targets.LEADER ? "kill-leader" : "kill-any";
    }

    @Override
    public Optional<Fault> inject(Random random) throws IOException {
        return targets.claimOne(cluster, random, (node, who) -> {
            node.kill();
            return new Fault("kill", "killed " + who, () -> {
                node.start();
                try {
                    return "restarted " + node + "; " + cluster.awaitCaughtUp(node, CATCH_UP);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return "restarted " + node;
                }
            });
        });
    }

    @Override
    public void healAll() throws IOException {
        for (NodeProcess node : cluster.nodes()) {
            node.start();
        }
    }
}
