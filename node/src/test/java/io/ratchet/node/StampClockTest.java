package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class StampClockTest {
    private static final long MINUTE = 60_000;
    private long wall = 1_800_000_000_000L;
    private long mono = TimeUnit.SECONDS.toNanos(12_345);
    private final StampClock clock = new StampClock(() -> wall, () -> mono);

    private void pass(long millis) {
        wall += millis;
        mono += TimeUnit.MILLISECONDS.toNanos(millis);
    }

    @Test
    void followsAWallClockThatDoesNotStep() {
        long start = clock.getAsLong();
        assertEquals(wall, start);
        pass(30_000);
        assertEquals(wall, clock.getAsLong());
        assertEquals(0, clock.wallAhead());
        assertEquals(0, clock.steps());
    }

    @Test
    void aLeaseDoesNotEndEarlyWhenTheLeadersClockJumpsFiveMinutesAhead() {
        long granted = clock.getAsLong();
        long leaseEnds = granted + 30_000;
        wall += 5 * MINUTE;
        // Stamped every 100 ms through the lease: cluster time never reaches its end before 99% of it passed.
        for (int i = 0; i < 297; i++) {
            pass(100);
            assertTrue(clock.getAsLong() < leaseEnds, "cluster time reached the lease's end after " + (i + 1) * 100 + " ms");
        }
        assertEquals(1, clock.steps());
        assertTrue(clock.wallAhead() > 4 * MINUTE);
    }

    @Test
    void aLeaseDoesNotOutliveItselfWhenTheLeadersClockJumpsFiveMinutesBack() {
        long granted = clock.getAsLong();
        long leaseEnds = granted + 30_000;
        wall -= 5 * MINUTE;
        long last = granted;
        for (int i = 0; i < 304; i++) {
            pass(100);
            long stamp = clock.getAsLong();
            assertTrue(stamp >= last, "stamps went back");
            last = stamp;
        }
        assertTrue(last >= leaseEnds, "30.4 s after the grant cluster time is still short of the lease's end: " + (leaseEnds - last) + " ms");
    }

    @Test
    void catchesUpWithAStepThatStaysAtOnePercentOfTheTimeThatPasses() {
        long before = clock.getAsLong();
        wall += 5 * MINUTE;
        pass(10 * MINUTE);
        long after = clock.getAsLong();
        assertEquals(10 * MINUTE + 6_000, after - before, "ten minutes move stamps ten minutes and 1% of that");
        pass(9 * 60 * MINUTE);
        clock.getAsLong();
        assertEquals(0, clock.wallAhead(), "nine hours later the five-minute step is caught up");
    }

    @Test
    void slewsEvenWhenReadEveryMillisecond() {
        wall += 2_000;
        long before = clock.getAsLong();
        for (int i = 0; i < 1_000; i++) {
            pass(1);
            clock.getAsLong();
        }
        assertEquals(1_000 + 10, clock.getAsLong() - before, "one second of readings a millisecond apart slews 10 ms");
    }

    @Test
    void smallCorrectionsAreFollowedAtOnceWithinTheAllowance() {
        clock.getAsLong();
        pass(10_000);
        wall += 80;
        assertEquals(wall, clock.getAsLong(), "10 s allow 100 ms of slew: an 80 ms correction is taken whole");
        assertEquals(0, clock.steps());
    }
}
