package io.ratchet.chaos.nemesis;

import io.ratchet.chaos.cluster.Cluster;
import io.ratchet.chaos.cluster.NamespaceNetwork;
import io.ratchet.chaos.cluster.NodeProcess;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Network partitions between nodes: either the leader alone against the rest (an old leader that must
 * stop serving, and a majority that must elect a new one), or the cluster split at random into a
 * majority and a minority. The split is drawn over the voters every group's leader names, so that one side
 * always holds a majority of every group's voters: beside a membership change, a node still joining (in
 * service, not yet a voter) counted as one once put two of four voters on each side, and no side could
 * elect a leader; and at several groups, a split drawn over group 0's five voters put two of another
 * group's four on each side while the change had not reached it (a soak lost locks to it). Nodes that
 * are not voters go with the majority. Needs the nodes in network namespaces
 * ({@link NamespaceNetwork}).
 */
public final class PartitionNemesis implements Nemesis {
    private final Cluster cluster;
    private final NamespaceNetwork network;

    public PartitionNemesis(Cluster cluster, NamespaceNetwork network) {
        this.cluster = cluster;
        this.network = network;
    }

    @Override
    public String name() {
        return "partition";
    }

    @Override
    public Optional<Fault> inject(Random random) throws IOException {
        // The nodes in service: spares not (yet) started by a membership nemesis take no side.
        List<Integer> all = new ArrayList<>();
        for (NodeProcess node : cluster.nodes()) {
            if (node.inService()) {
                all.add(cluster.number(node));
            }
        }
        Set<Integer> minority;
        String how;
        Optional<NodeProcess> leader = random.nextBoolean() ? cluster.leader() : Optional.empty();
        if (leader.isPresent()) {
            minority = new TreeSet<>(List.of(cluster.number(leader.get())));
            how = "isolated the leader";
        } else {
            // Without a leader to name the voters, every node in service counts as one.
            List<Cluster.GroupVoters> groups = cluster.groupVoters();
            List<Integer> sides = new ArrayList<>(all);
            int size = (sides.size() - 1) / 2;
            if (!groups.isEmpty()) {
                sides.retainAll(votersOfEvery(groups).stream().map(id -> cluster.number(cluster.node(id))).toList());
                size = minority(groups);
            }
            Collections.shuffle(sides, random);
            minority = new TreeSet<>(sides.subList(0, Math.min(sides.size(), size)));
            if (minority.isEmpty()) {
                return Optional.empty();
            }
            how = "split the cluster";
        }
        Set<Integer> majority = new TreeSet<>(all);
        majority.removeAll(minority);
        network.partition(List.of(minority, majority));
        String description = how + ": " + names(minority) + " | " + names(majority);
        return Optional.of(new Fault("partition", description, () -> {
            network.heal();
            return "healed the partition " + names(minority) + " | " + names(majority);
        }));
    }

    /** The voters every group names. */
    static List<String> votersOfEvery(List<Cluster.GroupVoters> groups) {
        List<String> common = new ArrayList<>(groups.get(0).voters());
        groups.forEach(g -> common.retainAll(g.voters()));
        return common;
    }

    /**
     * How many voters the minority side may take so that the other side keeps a majority of every group's
     * voters: fewer than half of the smallest group's; and while a group's change is under way, of one voter
     * fewer, since the old voters (one more or one fewer) must find their majority on that side too.
     */
    static int minority(List<Cluster.GroupVoters> groups) {
        int smallest = groups.stream().mapToInt(g -> g.voters().size()).min().orElse(0);
        boolean changing = groups.stream().anyMatch(Cluster.GroupVoters::changing);
        return Math.max(0, (smallest - (changing ? 2 : 1)) / 2);
    }

    private static String names(Set<Integer> numbers) {
        return numbers.stream().map(n -> "n" + n).collect(Collectors.joining(",", "{", "}"));
    }

    @Override
    public void healAll() throws IOException {
        network.heal();
    }
}
