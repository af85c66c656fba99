package io.ratchet.statemachine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ClusterClockTest {
    private static final long EPOCH = 1_800_000_000_000L;
    /** Real time since the test began, in millis; each node's monotonic clock has its own origin. */
    private long real;
    /** Node A leads first; its clock is right. Node B's clock is {@link #bAhead} ms ahead of it. */
    private long bAhead;
    private final ClusterClock a = new ClusterClock(() -> EPOCH + real, () -> mono(5_000));
    private final ClusterClock b = new ClusterClock(() -> EPOCH + real + bAhead, () -> mono(-77_000));

    private long mono(long originSeconds) {
        return TimeUnit.MILLISECONDS.toNanos(real) + TimeUnit.SECONDS.toNanos(originSeconds);
    }

    private long monoOfB() {
        return mono(-77_000);
    }

    /** A leads for {@code millis}, stamping every 10 ms; B applies each entry {@code lag} ms after it was stamped. */
    private long aLeads(long millis, long lag) {
        long stamp = 0;
        for (long t = 0; t < millis; t += 10) {
            stamp = a.stamp(0);
            real += lag;
            b.saw(stamp, monoOfB());
            real += 10 - lag;
        }
        return stamp;
    }

    @Test
    void aReplicaThatSawNoStampStampsTheNodesClockNeverBelowClusterTime() {
        bAhead = 250;
        assertEquals(EPOCH + 250, b.stamp(0));
        ClusterClock c = new ClusterClock(() -> EPOCH, () -> 0L);
        // A whole cluster restarted: its replays say nothing of the downtime, and cluster time never goes back.
        assertEquals(EPOCH + 9_000, c.stamp(EPOCH + 9_000));
    }

    @Test
    void aNewLeaderWhoseClockIsAheadCarriesClusterTimeOnInsteadOfJumping() {
        bAhead = 1_600;
        long granted = aLeads(3_000, 2);
        long leaseEnds = granted + 5_000;
        real += 800; // A dies; B is elected
        // Stamped every 100 ms: the lease's end is not reached before 99% of its 5 s has passed.
        for (long t = 900; t < 4_950; t += 100) {
            real += 100;
            long stamp = b.stamp(0);
            assertTrue(stamp < leaseEnds, "the lease ended " + t + " ms after it was granted");
            assertTrue(stamp >= granted + t - 5, "cluster time fell behind real time by " + (granted + t - stamp) + " ms");
        }
    }

    @Test
    void aNewLeaderWhoseClockIsBehindKeepsClusterTimeMoving() {
        bAhead = -3_000;
        long last = aLeads(1_000, 1);
        real += 500;
        long first = b.stamp(last);
        assertTrue(first >= last + 499 && first <= last + 510, "first stamp " + (first - last) + " ms after the last");
        real += 1_000;
        assertEquals(first + 1_000, b.stamp(last), "cluster time runs at B's monotonic rate");
    }

    @Test
    void stampsAreDrawnTowardTheNodesClockAtOnePercent() {
        bAhead = 2_000;
        aLeads(1_000, 0);
        long carried = EPOCH + real;
        for (int i = 0; i < 1_000; i++) {
            real += 100;
            carried += 100;
            long stamp = b.stamp(0);
            assertTrue(stamp <= carried + (i + 1) + 1, "pulled " + (stamp - carried) + " ms after " + (i + 1) * 100 + " ms");
        }
        // 100 s at 1%: a second of the two caught up with; all of it after 200 s, and then B's clock is followed.
        assertEquals(carried + 1_000, b.stamp(0), 2);
        real += 150_000;
        assertEquals(EPOCH + real + bAhead, b.stamp(0));
        real += 10;
        assertEquals(EPOCH + real + bAhead, b.stamp(0));
    }

    @Test
    void anEntryAppliedLateNeverMovesTheEstimateBack() {
        bAhead = -1_000;
        long last = aLeads(1_000, 0);
        real += 3_000;
        b.saw(last - 2_000, monoOfB()); // an old entry caught up with
        assertEquals(EPOCH + real, b.stamp(0));
    }

    @Test
    void aPeekGivesTheNextStampWithoutGivingIt() {
        bAhead = 1_600;
        aLeads(1_000, 0);
        real += 300;
        long peeked = b.peek(0);
        assertEquals(peeked, b.peek(0));
        assertEquals(peeked, b.stamp(0));
        assertEquals(EPOCH + real + 3, peeked, 1);
    }
}
