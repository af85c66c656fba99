package io.ratchet.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BackoffTest {
    private final Backoff backoff = new Backoff(Duration.ofMillis(10), Duration.ofSeconds(1));

    @Test
    void theCeilingDoublesFromTheBaseAndStopsAtTheCap() {
        long[] expectedMillis = {10, 20, 40, 80, 160, 320, 640, 1000, 1000};
        for (int failures = 1; failures <= expectedMillis.length; failures++) {
            assertEquals(Duration.ofMillis(expectedMillis[failures - 1]).toNanos(), backoff.ceilingNanos(failures));
        }
        assertEquals(Duration.ofSeconds(1).toNanos(), backoff.ceilingNanos(Integer.MAX_VALUE), "no overflow however long it runs");
    }

    @Test
    void fullJitterDrawsAnywhereFromZeroToTheCeiling() {
        SplittableRandom random = new SplittableRandom(42);
        for (int failures = 1; failures <= 12; failures++) {
            long ceiling = backoff.ceilingNanos(failures);
            long min = Long.MAX_VALUE;
            long max = 0;
            for (int i = 0; i < 2_000; i++) {
                long d = backoff.delay(failures, random).toNanos();
                assertTrue(d >= 0 && d <= ceiling, d + " within [0, " + ceiling + "]");
                min = Math.min(min, d);
                max = Math.max(max, d);
            }
            assertTrue(min < ceiling / 20, "some waits are near zero (full jitter), not a fixed floor");
            assertTrue(max > ceiling - ceiling / 20, "some waits reach near the ceiling");
        }
    }

    @Test
    void badBoundsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new Backoff(Duration.ZERO, Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> backoff.ceilingNanos(0));
    }
}
