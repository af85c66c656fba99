package io.ratchet.recipes.election;

/**
 * Told when a {@link LeaderElection} candidate gains or loses leadership, in the order it happened, one
 * event at a time on a background thread. Must not block; an exception it throws is ignored.
 */
public interface LeadershipListener {
    /** This candidate now leads, in {@code term}. */
    void isLeader(long term);

    /**
     * This candidate no longer leads {@code term}: it resigned, its lease was lost, or renewals failed until
     * the lease it was sure of ended. Stop acting as leader before anything else.
     */
    void notLeader(long term);
}
