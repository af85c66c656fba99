package io.ratchet.client;

import io.ratchet.protocol.Result;

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
 */
public record NodeStatus(String id, String address, String role, String leader, long term, long appliedIndex,
                         long commitIndex, long clusterTime, long items, long usedBytes, long quotaBytes, String error) {
    /** The role of a node that is up but cannot serve its state yet. */
    public static final String STARTING = "STARTING";

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
        return new NodeStatus(id, address, "UNREACHABLE", null, 0, 0, 0, 0, 0, 0, 0, error);
    }
}
