package io.ratchet.chaos.nemesis;

import io.ratchet.client.ClusterAdmin;
import io.ratchet.client.NodeStatus;
import java.io.IOException;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The cluster's configuration as its leader holds it once settled: committed (the leader's commit index
 * has reached the entry that made it) and with no change under way; every node's status beside it. What
 * a membership nemesis decides on, and the only thing it trusts about who is a member.
 *
 * @param leader   the leader's status (the highest term, should two claim to lead), with its configuration
 * @param statuses every node that answered, by id
 */
record SettledConfiguration(NodeStatus leader, Map<String, NodeStatus> statuses) {
    /**
     * Entries a live voter may have left to apply, by the leader's commit index. The nodes are asked one
     * after another under load, so a healthy follower lags by a few; one catching up, by hundreds.
     */
    static final long CAUGHT_UP = 200;
    private static final Duration POLL = Duration.ofMillis(250);

    /** Asks every node until the configuration has settled; empty if it has not within {@code timeout}. */
    static Optional<SettledConfiguration> read(ClusterAdmin admin, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<NodeStatus> statuses = admin.status();
            Optional<NodeStatus> leader = statuses.stream().filter(s -> "LEADER".equals(s.role()))
                    .max(Comparator.comparingLong(NodeStatus::term));
            if (leader.isPresent()) {
                NodeStatus.Configuration conf = leader.get().configuration();
                if (!conf.changing() && !conf.members().isEmpty() && leader.get().commitIndex() >= conf.index()) {
                    return Optional.of(new SettledConfiguration(leader.get(), statuses.stream()
                            .collect(Collectors.toMap(NodeStatus::id, s -> s, (a, b) -> a))));
                }
            }
            if (System.nanoTime() > deadline) {
                return Optional.empty();
            }
            pause(POLL);
        }
    }

    /** The log index of the entry that made this configuration. */
    long index() {
        return leader.configuration().index();
    }

    List<String> voters() {
        return leader.configuration().members().stream().filter(p -> "VOTER".equals(p.role()))
                .map(NodeStatus.ConfiguredPeer::id).sorted().toList();
    }

    boolean member(String id) {
        return leader.configuration().members().stream().anyMatch(p -> p.id().equals(id));
    }

    /**
     * It answered as a leader or follower and has applied nearly all the leader has committed: a joining,
     * starting or unreachable node is not live, nor one still catching up after a restart (it answers, but
     * cannot acknowledge new entries until it has caught up).
     */
    boolean live(String id) {
        NodeStatus s = statuses.get(id);
        return s != null && ("LEADER".equals(s.role()) || "FOLLOWER".equals(s.role()))
                && leader.commitIndex() - s.appliedIndex() <= CAUGHT_UP;
    }

    String describe(String id) {
        return id + (id.equals(leader.id()) ? " (the leader)" : " (a follower)");
    }

    @Override
    public String toString() {
        return "voters " + String.join(",", voters()) + ", leader " + leader.id();
    }

    static void pause(Duration d) throws IOException {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
