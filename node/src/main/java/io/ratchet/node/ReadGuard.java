package io.ratchet.node;

import org.apache.ratis.protocol.RaftPeerId;

/**
 * When a linearizable read waiting on a leader is given up (the front end's {@code guardedRead}): a
 * follower answers one only with its leader's read index, and a leader gone silent answers nothing.
 */
final class ReadGuard {
    private ReadGuard() {
    }

    /**
     * Why a read that node {@code self} sent to leader {@code asked} should be given up, or null while it
     * may still be answered: {@code self} still follows {@code asked} and heard from it within
     * {@code lostMillis} (Ratis' minimum election timeout, after which Ratis holds the leader lost).
     *
     * @param follower     whether {@code self} is a follower now (not a candidate, not the leader)
     * @param leader       the leader {@code self} follows now; null if none
     * @param silentMillis how long since {@code self} last heard from its leader
     */
    static String lost(String self, RaftPeerId asked, boolean follower, RaftPeerId leader, long silentMillis, long lostMillis) {
        if (!follower) {
            return "node " + self + " no longer follows leader " + asked + " (it stands for election or leads now)";
        }
        if (leader == null || !leader.equals(asked)) {
            return "node " + self + " follows " + (leader == null ? "no leader" : "leader " + leader) + " now, not " + asked;
        }
        if (silentMillis >= lostMillis) {
            return "node " + self + " has not heard from its leader for " + silentMillis + " ms";
        }
        return null;
    }
}
