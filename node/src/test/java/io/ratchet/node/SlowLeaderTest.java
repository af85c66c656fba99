package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.PaceRpc;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The slow-leader rule and the pace meter's window, on given numbers. */
class SlowLeaderTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    @Test
    void aStarvedLeaderHandsToTheFurthestVoterThatRunsFreely() {
        Map<String, Double> voters = new LinkedHashMap<>(); // the furthest in the log first
        voters.put("n4", 0.5);
        voters.put("n2", 0.08);
        voters.put("n3", 0.01);
        assertEquals(Optional.of("n2"), SlowLeaderWatch.choose(0.8, 0.3, voters),
                "n4 is further but starved too; n3 runs more freely, but n2 holds more of the log");
        assertEquals(Optional.empty(), SlowLeaderWatch.choose(0.29, 0.3, voters), "under the threshold: no hand-over");
    }

    @Test
    void whenEveryoneIsSlowTheMachineIsBusyAndNobodyHandsOver() {
        assertEquals(Optional.empty(), SlowLeaderWatch.choose(0.6, 0.3, Map.of("n2", 0.5, "n3", 0.45)));
        // Better than the leader, but not by three times: no hand-over to a node nearly as starved.
        assertEquals(Optional.empty(), SlowLeaderWatch.choose(0.45, 0.3, Map.of("n2", 0.2)));
        // Three times better, but over the threshold itself.
        assertEquals(Optional.empty(), SlowLeaderWatch.choose(1.0, 0.3, Map.of("n2", 0.31)));
        assertEquals(Optional.empty(), SlowLeaderWatch.choose(1.0, 0.3, Map.of()), "no voter answered");
    }

    @Test
    void theLeaderDecidesOnFreshAnswersAndOnlyWhileItIsStarvedNow() {
        long now = 50_000 * MS;
        Map<String, PaceAsker.Answer> voters = new LinkedHashMap<>();
        voters.put("n3", new PaceAsker.Answer(0.01, now - SlowLeaderWatch.FRESH.toNanos() - MS));
        voters.put("n2", new PaceAsker.Answer(0.02, now - 400 * MS));
        assertEquals(Optional.of("n2"), SlowLeaderWatch.target(0.5, 0.9, 0.3, voters, now),
                "n3 is further in the log, but its answer is too old to count");
        assertEquals(Optional.empty(), SlowLeaderWatch.target(0.5, 0.1, 0.3, voters, now),
                "the second holds a stall, but the last quarter ran on time: it is over");
        assertEquals(Optional.empty(), SlowLeaderWatch.target(0.2, 0.9, 0.3, voters, now), "a moment's starvation");
        voters.remove("n2");
        assertEquals(Optional.empty(), SlowLeaderWatch.target(0.9, 0.9, 0.3, voters, now), "no fresh answer: nobody");
    }

    @Test
    void aNodesAnswersAreKeptForAMinuteSoThatOneStarvedAMomentAgoIsKnownAfterItRecovers() {
        long t = 7_000_000 * MS;
        PaceAsker.Answers answers = new PaceAsker.Answers();
        answers.add(new PaceAsker.Answer(0.05, t));
        answers.add(new PaceAsker.Answer(0.6, t + 1_000 * MS)); // starved, leading
        answers.add(new PaceAsker.Answer(0.04, t + 2_000 * MS)); // its groups handed away: it runs freely again
        assertEquals(Optional.of(0.6), answers.highestSince(t + 1_000 * MS), "starved within the time looked back");
        assertEquals(Optional.of(0.04), answers.highestSince(t + 1_001 * MS));
        assertEquals(Optional.empty(), answers.highestSince(t + 2_001 * MS), "nothing asked since");
        assertEquals(Optional.of(new PaceAsker.Answer(0.04, t + 2_000 * MS)), answers.last(), "the watch's: the newest");
        answers.add(new PaceAsker.Answer(0.02, t + 1_000 * MS + PaceAsker.Answers.KEPT.toNanos() + MS));
        assertEquals(Optional.of(0.04), answers.highestSince(t), "answers older than a minute are dropped");
    }

    @Test
    void theWindowCountsTheShareOfTheLastSecondSpentLate() {
        PaceMeter.Window window = new PaceMeter.Window();
        long t = 1_000_000 * MS; // any origin; nanoTime may be anything
        for (int i = 0; i < 200; i++) {
            t += 10 * MS;
            window.add(t, 0);
        }
        assertEquals(0.0, window.share(t), "on time: nothing late");
        // Throttled as a 10% CPU quota does it: every 100 ms, one wait 80 ms past due.
        for (int i = 0; i < 5; i++) {
            t += 100 * MS;
            window.add(t, 80 * MS);
        }
        // Half a second in, the second's share is past a threshold of 0.3, and the last quarter is starved.
        assertTrue(window.share(t) >= 0.3, "half a second of a quota: " + window.share(t));
        assertEquals(0.8, window.share(t, PaceMeter.Window.RECENT), 0.2);
        for (int i = 0; i < 15; i++) {
            t += 100 * MS;
            window.add(t, 80 * MS);
        }
        assertEquals(0.8, window.share(t), 0.05);
        // Free again: the share falls to nothing once a second has passed.
        for (int i = 0; i < 130; i++) {
            t += 10 * MS;
            window.add(t, 0);
        }
        assertEquals(0.0, window.share(t), 1e-9);
    }

    @Test
    void aPauseThatIsOverLeavesTheSecondsShareButNotTheRecentOne() {
        PaceMeter.Window window = new PaceMeter.Window();
        long t = 7_000 * MS;
        window.add(t, 0);
        t += 400 * MS;
        window.add(t, 390 * MS); // one pause of 390 ms (a GC, a SIGSTOP), then on time again
        for (int i = 0; i < 40; i++) {
            t += 10 * MS;
            window.add(t, 0);
        }
        assertTrue(window.share(t) >= 0.3, "the second still holds the pause: " + window.share(t));
        assertEquals(0.0, window.share(t, PaceMeter.Window.RECENT), 1e-9, "but the last quarter second ran on time");
        assertThrows(IllegalArgumentException.class, () -> window.share(0, 0));
        assertThrows(IllegalArgumentException.class, () -> window.share(0, 9));
    }

    @Test
    void aSingleLongStallCountsInFullAndNeverOverOne() {
        PaceMeter.Window window = new PaceMeter.Window();
        long t = -5_000 * MS; // negative times too
        window.add(t, 0);
        t += 800 * MS;
        window.add(t, 740 * MS); // a GC pause, or SIGSTOP, of 0.74 s
        t += 150 * MS; // into the next slots, so the stall lies wholly inside the span
        assertEquals(740.0 / 1_000, window.share(t), 0.13);
        window.add(t, 10_000 * MS); // longer than the span
        assertEquals(1.0, window.share(t + 150 * MS), 1e-9);
    }

    @Test
    void theMeterOfAnIdleProcessReadsNearlyNothing() {
        try (PaceMeter meter = new PaceMeter()) {
            double share = meter.stalledShare();
            assertTrue(share >= 0 && share < 0.5, "a fresh meter: " + share);
        }
    }

    @Test
    void aPaceAnswerIsEightBytesOfMillionths() {
        assertEquals(0.25, PaceRpc.decode(PaceRpc.encode(0.25)));
        assertEquals(1.0, PaceRpc.decode(PaceRpc.encode(7)), "clamped");
        assertThrows(IllegalArgumentException.class, () -> PaceRpc.decode(new byte[3]));
        assertThrows(IllegalArgumentException.class, () -> PaceRpc.decode(new byte[] {-1, 0, 0, 0, 0, 0, 0, 0}));
    }
}
