package io.ratchet.chaos.nemesis;

import io.ratchet.chaos.cluster.Cluster;
import io.ratchet.chaos.cluster.NodeFaults;
import io.ratchet.chaos.cluster.NodeProcess;
import java.io.IOException;
import java.util.Optional;
import java.util.Random;

/**
 * A node's disk goes bad, the leader's half the time: either every fsync of its storage stalls for one to
 * three seconds (a slow or dying disk, a saturated volume), or every write and fsync fails with EIO. A node
 * whose disk fails must stop serving rather than acknowledge anything it could not make durable; healed,
 * the disk works again and a node that stopped is started again, recovering from what it had made durable.
 * The node is {@linkplain NodeProcess#claim() claimed} while its disk is bad, so a membership change leaves
 * it alone.
 */
public final class DiskNemesis implements Nemesis {
    static final int MIN_STALL_MS = 1_000;
    static final int MAX_STALL_MS = 3_000;

    private final Cluster cluster;
    private final NodeFaults faults;

    public DiskNemesis(Cluster cluster) {
        this.cluster = cluster;
        this.faults = cluster.faults();
    }

    @Override
    public String name() {
        return "disk";
    }

    @Override
    public Optional<Fault> inject(Random random) throws IOException {
        return Targets.either(random).claimOne(cluster, random, (node, who) -> {
            Fault.Healer heal = () -> {
                faults.healDisk(node.id());
                boolean stopped = !node.alive();
                node.start();
                return "the disk of " + node.id() + " works again" + (stopped ? "; it had stopped, started again: " + node : "");
            };
            if (random.nextBoolean()) {
                int stallMillis = MIN_STALL_MS + random.nextInt(MAX_STALL_MS - MIN_STALL_MS + 1);
                faults.stallSyncs(node.id(), stallMillis);
                return new Fault("slow-disk", "every fsync of " + who + " stalls " + stallMillis + " ms", heal);
            }
            faults.failDisk(node.id());
            return new Fault("disk-error", "every write and fsync of " + who + " fails with EIO", heal);
        });
    }

    @Override
    public void healAll() throws IOException {
        for (NodeProcess node : cluster.nodes()) {
            faults.healDisk(node.id());
            node.start();
        }
    }
}
