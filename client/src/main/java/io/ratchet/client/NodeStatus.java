package io.ratchet.client;

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
 * @param error        why the node did not answer, when role is UNREACHABLE
 */
public record NodeStatus(String id, String address, String role, String leader, long term, long appliedIndex,
                         long commitIndex, long clusterTime, long items, String error) {
    /** The role of a node that is up but cannot serve its state yet. */
    public static final String STARTING = "STARTING";

    static NodeStatus unreachable(String id, String address, String error) {
        return new NodeStatus(id, address, "UNREACHABLE", null, 0, 0, 0, 0, 0, error);
    }
}
