package io.ratchet.common;

import java.util.ArrayList;
import java.util.List;

/**
 * Whether a node is ready to take traffic: it is a member of its Raft group, it knows a leader, and it
 * has applied to within {@link #MAX_APPLY_LAG} entries of the commit index it knows. One rule for the
 * node's {@code /health/ready} probe, which load balancers and Kubernetes poll, and for
 * {@code ratchet status}, so the two never disagree about a node.
 *
 * @param member       whether the node is a voting member or a listener of its group
 * @param leader       the leader it knows (itself when it leads), or null
 * @param appliedIndex the last index it applied
 * @param commitIndex  the last index it knows is committed
 */
public record Readiness(boolean member, String leader, long appliedIndex, long commitIndex) {
    /**
     * How far a ready node's applied index may trail its commit index. A node keeping up under load is a
     * few entries behind; one further behind is replaying its log or catching up, and what it serves
     * (stale reads, watches) would trail the cluster by that much.
     */
    public static final long MAX_APPLY_LAG = 1000;

    /** What keeps the node from being ready, in words; empty when it is ready. */
    public List<String> failed() {
        List<String> failed = new ArrayList<>(3);
        if (!member) {
            failed.add("not a member of its Raft group");
        }
        if (leader == null || leader.isEmpty()) {
            failed.add("no leader known");
        }
        if (commitIndex - appliedIndex > MAX_APPLY_LAG) {
            failed.add("applied index " + appliedIndex + " trails commit index " + commitIndex
                    + " by more than " + MAX_APPLY_LAG);
        }
        return failed;
    }

    public boolean ready() {
        return failed().isEmpty();
    }
}
