package io.ratchet.chaos.nemesis;

import io.ratchet.chaos.cluster.Cluster;
import io.ratchet.chaos.cluster.NodeProcess;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.Random;

/** Which node a fault hits. */
enum Targets {
    /** The node the others follow now. */
    LEADER,
    /** Any running node, leader or not. */
    ANY;

    Optional<NodeProcess> pick(Cluster cluster, Random random) {
        if (this == LEADER) {
            // Right after a fault or under load the nodes may not name a leader for a moment: ask again.
            for (int attempt = 0; attempt < 10; attempt++) {
                Optional<NodeProcess> leader = cluster.leader().filter(Targets::free);
                if (leader.isPresent()) {
                    return leader;
                }
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return Optional.empty();
                }
            }
            return Optional.empty();
        }
        List<NodeProcess> running = cluster.nodes().stream().filter(Targets::free).toList();
        return running.isEmpty() ? Optional.empty() : Optional.of(running.get(random.nextInt(running.size())));
    }

    /** Running, and no other nemesis acting on it (a membership change). */
    private static boolean free(NodeProcess node) {
        return node.alive() && !node.paused() && !node.claimed();
    }

    /** The leader half the time, any node otherwise. */
    static Targets either(Random random) {
        return random.nextBoolean() ? LEADER : ANY;
    }

    /** Makes a fault on one node, described as {@code who} ({@link #describe}). */
    @FunctionalInterface
    interface Injector {
        Fault inject(NodeProcess node, String who) throws IOException;
    }

    /**
     * Picks a node, {@linkplain NodeProcess#claim() claims} it so that no other nemesis acts on it, and makes
     * the fault; the node is released when the fault is healed, or at once if making it failed. Empty when
     * there is no node to act on.
     */
    Optional<Fault> claimOne(Cluster cluster, Random random, Injector injector) throws IOException {
        Optional<NodeProcess> target = pick(cluster, random);
        if (target.isEmpty() || !target.get().claim()) {
            return Optional.empty();
        }
        NodeProcess node = target.get();
        try {
            Fault fault = injector.inject(node, describe(cluster, node));
            return Optional.of(new Fault(fault.kind(), fault.description(), () -> {
                try {
                    return fault.heal();
                } finally {
                    node.release();
                }
            }));
        } catch (IOException | RuntimeException e) {
            node.release();
            throw e;
        }
    }

    String describe(Cluster cluster, NodeProcess node) {
        boolean leads = this == LEADER || cluster.leader().map(l -> l == node).orElse(false);
        return node.id() + (leads ? " (the leader" : " (a follower") + ", pid " + node.pid() + ")";
    }
}
