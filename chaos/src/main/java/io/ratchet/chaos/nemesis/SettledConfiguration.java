package io.ratchet.chaos.nemesis;

import io.ratchet.client.ClusterAdmin;
import io.ratchet.client.NodeStatus;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Every Raft group's configuration as its leader holds it once settled: committed (the leader's commit index
 * has reached the entry that made it) and with no change under way; every node's status beside them. What a
 * membership nemesis decides on, and the only thing it trusts about who is a member.
 *
 * <p>On a cluster of several groups a membership change is made group by group, and may stop half way (a
 * leader lost, a node that stopped answering): the groups then disagree until it is asked again. So a node
 * is a {@linkplain #member member} while any group names it (its storage must not be deleted), and the
 * voters a change is planned on are those of groups that {@linkplain #agreed() agree}.
 *
 * @param groups   each group's settled configuration, in group order (one on a cluster of one group)
 * @param statuses every node that answered, by id
 */
record SettledConfiguration(List<Group> groups, Map<String, NodeStatus> statuses) {
    /**
     * Entries a live voter may have left to apply, by the leader's commit index. The nodes are asked one
     * after another under load, so a healthy follower lags by a few; one catching up, by hundreds.
     */
    static final long CAUGHT_UP = 200;
    private static final Duration POLL = Duration.ofMillis(250);

    /**
     * One group as its leader holds it.
     *
     * @param leader      the id of the node that leads it (the highest term, should two claim to)
     * @param commitIndex the leader's commit index
     */
    record Group(int group, String leader, long commitIndex, NodeStatus.Configuration configuration) {
        boolean settled() {
            return !configuration.changing() && !configuration.members().isEmpty() && commitIndex >= configuration.index();
        }

        /** Members and their roles, in id order: what two groups that agree have alike. */
        List<String> members() {
            return configuration.members().stream().map(p -> p.id() + "/" + p.role()).sorted().toList();
        }
    }

    /** Asks every node until every group's configuration has settled; empty if they have not within {@code timeout}. */
    static Optional<SettledConfiguration> read(ClusterAdmin admin, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Optional<SettledConfiguration> view = of(admin.status());
            if (view.isPresent()) {
                return view;
            }
            if (System.nanoTime() > deadline) {
                return Optional.empty();
            }
            pause(POLL);
        }
    }

    /** The settled configuration these statuses show, or empty when a group has no leader or a change under way. */
    static Optional<SettledConfiguration> of(List<NodeStatus> statuses) {
        List<Group> groups = new ArrayList<>();
        for (int g = 0; g < NodeStatus.groupCount(statuses); g++) {
            int group = g;
            Optional<Group> led = NodeStatus.leaderOf(statuses, group)
                    .map(s -> new Group(group, s.id(), s.group(group).commitIndex(), s.group(group).configuration()));
            if (led.isEmpty() || !led.get().settled()) {
                return Optional.empty();
            }
            groups.add(led.get());
        }
        return Optional.of(new SettledConfiguration(List.copyOf(groups), statuses.stream()
                .collect(Collectors.toMap(NodeStatus::id, s -> s, (a, b) -> a))));
    }

    /** Whether every group has the same members in the same roles: no change stopped half way. */
    boolean agreed() {
        return groups.stream().map(Group::members).distinct().count() == 1;
    }

    /**
     * The nodes some groups name and others do not, each with the groups that name it, in id order; empty
     * when the groups agree.
     */
    Map<String, List<Integer>> halfway() {
        Map<String, List<Integer>> halfway = new TreeMap<>();
        for (String id : named()) {
            List<Integer> naming = groups.stream().filter(g -> g.configuration().names(id)).map(Group::group).toList();
            if (naming.size() < groups.size()) {
                halfway.put(id, naming);
            }
        }
        return halfway;
    }

    /** Every node any group names. */
    private TreeSet<String> named() {
        TreeSet<String> all = new TreeSet<>();
        groups.forEach(g -> g.configuration().members().forEach(p -> all.add(p.id())));
        return all;
    }

    /** Group 0's leader: the node the cluster's admin calls and leader transfers go to. */
    String leader() {
        return groups.get(0).leader();
    }

    /** The log index of the entry that made group 0's configuration. */
    long index() {
        return groups.get(0).configuration().index();
    }

    /** Group 0's voters: every group's, when they {@linkplain #agreed() agree}. */
    List<String> voters() {
        return groups.get(0).configuration().voters();
    }

    /** Whether any group names the node: its storage must then be kept. */
    boolean member(String id) {
        return groups.stream().anyMatch(g -> g.configuration().names(id));
    }

    /** Whether every group names the node: a change adding it is done. */
    boolean memberOfEvery(String id) {
        return groups.stream().allMatch(g -> g.configuration().names(id));
    }

    /**
     * It answered as a leader or follower of every group and has applied nearly all each group's leader has
     * committed: a joining, starting or unreachable node is not live, nor one still catching up after a
     * restart (it answers, but cannot acknowledge new entries until it has caught up).
     */
    boolean live(String id) {
        NodeStatus s = statuses.get(id);
        if (s == null) {
            return false;
        }
        for (Group g : groups) {
            NodeStatus.GroupStatus own = s.group(g.group());
            if (own == null || !("LEADER".equals(own.role()) || "FOLLOWER".equals(own.role()))
                    || g.commitIndex() - own.appliedIndex() > CAUGHT_UP) {
                return false;
            }
        }
        return true;
    }

    String describe(String id) {
        return id + (id.equals(leader()) ? " (the leader)" : " (a follower)");
    }

    @Override
    public String toString() {
        String voters = "voters " + String.join(",", voters()) + ", leader " + leader();
        if (groups.size() == 1) {
            return voters;
        }
        return agreed() ? voters + " (every one of " + groups.size() + " groups)"
                : voters + " in group 0; the groups differ: " + halfway().entrySet().stream()
                        .map(e -> e.getKey() + " only in groups " + e.getValue()).collect(Collectors.joining(", "));
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
