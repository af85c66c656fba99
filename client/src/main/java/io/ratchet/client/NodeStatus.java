package io.ratchet.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.common.Readiness;
import io.ratchet.protocol.Result;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * One node's view of the cluster, as it answered a status call.
 *
 * @param id           the node's Raft peer id
 * @param address      host:port
 * @param role         LEADER, FOLLOWER, CANDIDATE, LISTENER; {@link #STARTING} when it answers Raft but
 *                     cannot serve its state yet (loading its snapshot and log, or catching up: its
 *                     {@code appliedIndex} says how far); or UNREACHABLE
 * @param leader       the leader this node knows of, or null
 * @param term         the term of the node's last log entry
 * @param appliedIndex the last log index the node applied
 * @param commitIndex  the last log index the node knows is committed
 * @param clusterTime  the node's cluster time (epoch milliseconds)
 * @param items        items in the node's store
 * @param usedBytes    what the node's state counts for against the storage quota (see {@code ratchet quota})
 * @param quotaBytes   the storage quota in the node's state (0 when the node did not answer)
 * @param error        why the node did not answer, when role is UNREACHABLE
 * @param configuration the cluster's members as this node knows them (empty for a node waiting to join,
 *                      or one that did not answer)
 * @param release      the release the node runs ({@code ratchet-node --version}); null when it did not
 *                     answer, or runs a release from before nodes said it
 * @param groups       each Raft group as this node sees it, in group order, on a cluster of several groups
 *                     (the fields above are then group 0's); empty on a cluster of one
 */
public record NodeStatus(String id, String address, String role, String leader, long term, long appliedIndex,
                         long commitIndex, long clusterTime, long items, long usedBytes, long quotaBytes, String error,
                         Configuration configuration, String release, List<GroupStatus> groups) {
    /**
     * One Raft group's member on this node: its role, the leader it knows of, its term and indexes, and the
     * group's configuration as this node knows it (each group has its own: a change made group by group can
     * stop half way; empty from a node of a release before nodes said it).
     */
    public record GroupStatus(int group, String role, String leader, long term, long commitIndex, long appliedIndex,
                              Configuration configuration) {
    }

    /**
     * A Raft configuration: its members and the log index of the entry that made it.
     *
     * @param changing whether a change is under way (the old and the new members both vote until it commits)
     */
    public record Configuration(long index, boolean changing, List<ConfiguredPeer> members) {
        static final Configuration NONE = new Configuration(0, false, List.of());

        /** The voters' ids, in order. */
        public List<String> voters() {
            return ids("VOTER");
        }

        /** The listeners' ids, in order. */
        public List<String> listeners() {
            return ids("LISTENER");
        }

        /** Whether it names {@code id}, as a voter or a listener. */
        public boolean names(String id) {
            return members.stream().anyMatch(p -> p.id().equals(id));
        }

        private List<String> ids(String role) {
            return members.stream().filter(p -> role.equals(p.role())).map(ConfiguredPeer::id).sorted().toList();
        }
    }

    /** A member as a configuration names it; {@code role} is VOTER or LISTENER. */
    public record ConfiguredPeer(String id, String address, String role) {
    }

    /** The role of a node that is up but cannot serve its state yet. */
    public static final String STARTING = "STARTING";

    /**
     * This node's member of group {@code group}: on a cluster of one group, its own fields as group 0's; null
     * when it has none (a group past those it reported, or past 0 for a node that reported no groups).
     */
    public GroupStatus group(int group) {
        if (groups.isEmpty()) {
            return group == 0 ? new GroupStatus(0, role, leader, term, commitIndex, appliedIndex, configuration) : null;
        }
        return group < groups.size() ? groups.get(group) : null;
    }

    /** How many groups these statuses show: 1 on a cluster of one group. */
    public static int groupCount(List<NodeStatus> statuses) {
        return statuses.stream().mapToInt(s -> Math.max(1, s.groups().size())).max().orElse(1);
    }

    /**
     * The node that says it leads {@code group} (the highest term's, should two claim to: the other was
     * deposed and has not heard yet); empty when none does.
     */
    public static Optional<NodeStatus> leaderOf(List<NodeStatus> statuses, int group) {
        return statuses.stream().filter(s -> s.group(group) != null && "LEADER".equals(s.group(group).role()))
                .max(Comparator.comparingLong(s -> s.group(group).term()));
    }

    /**
     * Whether the node is ready by the rule its {@code /health/ready} probe applies; a node that did not
     * answer is not a member as far as anyone can tell.
     */
    public Readiness readiness() {
        return new Readiness(!"UNREACHABLE".equals(role), leader, appliedIndex, commitIndex);
    }

    /** Whether the node's state has reached the storage quota's alarm mark (80%). */
    public boolean quotaAlarm() {
        return quotaBytes > 0 && Result.Quota.alarm(usedBytes, quotaBytes);
    }

    static NodeStatus unreachable(String id, String address, String error) {
        return new NodeStatus(id, address, "UNREACHABLE", null, 0, 0, 0, 0, 0, 0, 0, error, Configuration.NONE, null, List.of());
    }

    /** A node's answer to the admin service's {@code status}. */
    static NodeStatus fromJson(JsonNode s) {
        String leader = s.path("leader").isTextual() ? s.path("leader").asText() : null;
        List<GroupStatus> groups = new ArrayList<>();
        s.path("groups").forEach(g -> groups.add(new GroupStatus(g.path("group").asInt(), g.path("role").asText(),
                g.path("leader").isTextual() ? g.path("leader").asText() : null, g.path("term").asLong(),
                g.path("commitIndex").asLong(), g.path("appliedIndex").asLong(), configuration(g.path("configuration")))));
        return new NodeStatus(s.path("id").asText(), s.path("address").asText(), s.path("role").asText(), leader,
                s.path("term").asLong(), s.path("appliedIndex").asLong(), s.path("commitIndex").asLong(),
                s.path("clusterTime").asLong(), s.path("items").asLong(), s.path("usedBytes").asLong(),
                s.path("quotaBytes").asLong(), null, configuration(s.path("configuration")),
                s.path("release").isTextual() ? s.path("release").asText() : null, List.copyOf(groups));
    }

    private static Configuration configuration(JsonNode conf) {
        List<ConfiguredPeer> members = new ArrayList<>();
        conf.path("members").forEach(m -> members.add(new ConfiguredPeer(m.path("id").asText(), m.path("address").asText(),
                m.path("role").asText())));
        return new Configuration(conf.path("index").asLong(), conf.path("changing").asBoolean(), List.copyOf(members));
    }
}
