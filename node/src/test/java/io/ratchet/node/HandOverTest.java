package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.Test;

class HandOverTest {
    private static final RaftPeerId N2 = RaftPeerId.valueOf("n2");
    private static final RaftPeerId N3 = RaftPeerId.valueOf("n3");

    @Test
    void aNodeBackFromARestartIsNotHandedAGroupUntilItHoldsEveryCommittedEntry() {
        // n3 answered a moment ago but is still catching up: committed is 1000, it matches 400.
        List<HandOver.Follower> voters = List.of(new HandOver.Follower(N2, 40, 1000), new HandOver.Follower(N3, 5, 400));
        assertEquals(List.of(N2), HandOver.caughtUp(voters, 1_000, 1000));
        // Once it matches the commit index it is a target again.
        voters = List.of(new HandOver.Follower(N2, 40, 1000), new HandOver.Follower(N3, 5, 1000));
        assertEquals(List.of(N3, N2), HandOver.caughtUp(voters, 1_000, 1000));
    }

    @Test
    void theFurthestInTheLogComesFirstThenTheMostRecentlyHeard() {
        List<HandOver.Follower> voters = List.of(new HandOver.Follower(N2, 5, 900), new HandOver.Follower(N3, 50, 1000));
        assertEquals(List.of(N3, N2), HandOver.heard(voters, 1_000));
        // Silent for longer than the window: not a target at all.
        assertEquals(List.of(N2), HandOver.heard(voters, 20));
    }

    @Test
    void unknownMatchIndicesMakeNoVoterCaughtUp() {
        List<HandOver.Follower> voters = List.of(new HandOver.Follower(N2, 5, -1), new HandOver.Follower(N3, 5, -1));
        assertEquals(List.of(), HandOver.caughtUp(voters, 1_000, 0));
    }

    @Test
    void theBalancerPassesOverAVoterStarvedOfCpuAndTakesTheNext() {
        RaftPeerId n1 = RaftPeerId.valueOf("n1");
        Map<RaftPeerId, Integer> led = Map.of(n1, 3, N2, 0, N3, 1);
        // n2 leads nothing because the slow-leader watch just handed its groups away: it is not handed one back.
        assertEquals(Optional.of(N3), LeaderBalancer.target(List.of(N2, N3), led, 3, N2::equals));
        assertEquals(Optional.of(N2), LeaderBalancer.target(List.of(N2, N3), led, 3, p -> false));
        // Nobody leads two fewer than the giver: nothing moves.
        assertEquals(Optional.empty(), LeaderBalancer.target(List.of(N2, N3), Map.of(n1, 2, N2, 1, N3, 1), 2, p -> false));
    }

    @Test
    void aFollowerIsSteadyOnlyAfterAnsweringAtEveryLookForTheWholeTime() {
        RaftGroupId group = RaftGroupId.randomId();
        LeaderBalancer.Steadiness steadiness = new LeaderBalancer.Steadiness(Duration.ofSeconds(30));
        for (long s = 0; s <= 30; s++) {
            // n3 was killed and is back from s = 10: missing from a look starts its time again.
            steadiness.look(group, s < 5 || s >= 10 ? List.of(N2, N3) : List.of(N2), seconds(s));
        }
        assertTrue(steadiness.steady(group, N2, seconds(30)));
        assertFalse(steadiness.steady(group, N3, seconds(30)), "heard again only 20 s ago");
        assertFalse(steadiness.steady(group, N3, seconds(39)));
        assertTrue(steadiness.steady(group, N3, seconds(40)));
        // A look at a group this node no longer leads (no followers heard) forgets it: after leading it
        // again, the whole time is waited anew.
        steadiness.look(group, List.of(), seconds(41));
        steadiness.look(group, List.of(N2, N3), seconds(42));
        assertFalse(steadiness.steady(group, N2, seconds(50)));
        assertTrue(steadiness.steady(group, N2, seconds(72)));
        assertFalse(steadiness.steady(RaftGroupId.randomId(), N2, seconds(72)), "a group never looked at");
    }

    @Test
    void aGroupIsHandedOnlyToASteadyCaughtUpVoterAndNotWhileAVoterIsAway() {
        List<HandOver.Follower> both = List.of(new HandOver.Follower(N2, 40, 1000), new HandOver.Follower(N3, 5, 1000));
        assertEquals(List.of(N3, N2), LeaderBalancer.candidates(both, 2, 1000, p -> true));
        assertEquals(List.of(N2), LeaderBalancer.candidates(both, 2, 1000, N2::equals), "n3 answered, but not for long");
        // n3 is caught up and steady, but n2 has not answered for 3 s (killed, paused, cut off): a hand-over
        // now would leave the group's writes to two voters during the transfer. Nothing moves.
        List<HandOver.Follower> oneAway = List.of(new HandOver.Follower(N2, 3_000, 990), new HandOver.Follower(N3, 5, 1000));
        assertEquals(List.of(), LeaderBalancer.candidates(oneAway, 2, 1000, p -> true));
        // Ratis lists only the followers it has appenders for: one missing is one away.
        assertEquals(List.of(), LeaderBalancer.candidates(both.subList(1, 2), 2, 1000, p -> true));
        // Not the leader: no followers, nothing to hand.
        assertEquals(List.of(), LeaderBalancer.candidates(List.of(), 2, 1000, p -> true));
    }

    private static long seconds(long s) {
        return TimeUnit.SECONDS.toNanos(s);
    }

    @Test
    void aGroupIsNotMovedWhileAVoterWasStarvedOfCpuLately() {
        RaftPeerId n1 = RaftPeerId.valueOf("n1");
        List<RaftPeer> voters = List.of(peer("n1", 1), peer("n2", 2), peer("n3", 3));
        Map<String, Double> lately = new HashMap<>(Map.of("h:1", 0.9, "h:2", 0.05, "h:3", 0.6));
        Function<String, Optional<Double>> highest = address -> Optional.ofNullable(lately.get(address));
        assertEquals(Optional.of(N3), LeaderBalancer.starvedVoter(voters, n1, highest, 0.3),
                "n3 waited 60% of a second lately (n1, this node, does not count: its own watch decides for it)");
        lately.put("h:3", 0.29);
        assertEquals(Optional.empty(), LeaderBalancer.starvedVoter(voters, n1, highest, 0.3));
        lately.remove("h:3");
        assertEquals(Optional.empty(), LeaderBalancer.starvedVoter(voters, n1, highest, 0.3), "not asked lately");
        lately.put("h:2", 1.0);
        assertEquals(Optional.empty(), LeaderBalancer.starvedVoter(voters, n1, highest, 0), "threshold 0: nobody is starved");
    }

    private static RaftPeer peer(String id, int port) {
        return RaftPeer.newBuilder().setId(id).setAddress("h:" + port).build();
    }
}
