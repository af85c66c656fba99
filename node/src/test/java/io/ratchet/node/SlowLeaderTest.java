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
    void aStarvedLeaderHandsToTheLeastStarvedVoterThatRunsFreely() {
        Map<String, Double> voters = new LinkedHashMap<>();
        voters.put("n2", 0.08);
        voters.put("n3", 0.01);
        assertEquals(Optional.of("n3"), SlowLeaderWatch.choose(0.8, 0.3, voters));
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
    void theWindowCountsTheShareOfTheLastTwoSecondsSpentLate() {
        PaceMeter.Window window = new PaceMeter.Window();
        long t = 1_000_000 * MS; // any origin; nanoTime may be anything
        for (int i = 0; i < 200; i++) {
            t += 10 * MS;
            window.add(t, 0);
        }
        assertEquals(0.0, window.share(t), "on time: nothing late");
        // Throttled as a 10% CPU quota does it: every 100 ms, one wait 80 ms past due.
        for (int i = 0; i < 30; i++) {
            t += 100 * MS;
            window.add(t, 80 * MS);
        }
        assertEquals(0.8, window.share(t), 0.05);
        // Free again: the share falls to nothing once two seconds have passed.
        for (int i = 0; i < 250; i++) {
            t += 10 * MS;
            window.add(t, 0);
        }
        assertEquals(0.0, window.share(t), 1e-9);
    }

    @Test
    void aSingleLongStallCountsInFullAndNeverOverOne() {
        PaceMeter.Window window = new PaceMeter.Window();
        long t = -5_000 * MS; // negative times too
        window.add(t, 0);
        t += 1_500 * MS;
        window.add(t, 1_490 * MS); // a GC pause, or SIGSTOP, of 1.49 s
        t += 300 * MS; // into the next slots, so the stall lies wholly inside the span
        assertEquals(1_490.0 / 2_000, window.share(t), 0.13);
        window.add(t, 10_000 * MS); // longer than the span
        assertEquals(1.0, window.share(t + 300 * MS), 1e-9);
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
