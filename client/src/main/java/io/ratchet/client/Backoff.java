package io.ratchet.client;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Exponential backoff with full jitter: after the n-th failed attempt, wait a uniformly random time in
 * {@code [0, min(cap, base * 2^(n-1))]}. Full jitter (rather than a fixed or half-jittered delay)
 * spreads contending writers apart, so fewer of them collide on the next round.
 *
 * @param base the ceiling after the first failure (above 0)
 * @param cap  the largest ceiling, however many failures (at least {@code base})
 */
public record Backoff(Duration base, Duration cap) {

    public Backoff {
        if (base.isNegative() || base.isZero()) {
            throw new IllegalArgumentException("backoff base must be above 0, not " + base);
        }
        if (cap.compareTo(base) < 0) {
            throw new IllegalArgumentException("backoff cap " + cap + " is below its base " + base);
        }
    }

    /** The upper bound of the wait after {@code failures} failed attempts (1 or more), in nanoseconds. */
    public long ceilingNanos(int failures) {
        if (failures < 1) {
            throw new IllegalArgumentException("failures start at 1, not " + failures);
        }
        long base = this.base.toNanos();
        long cap = this.cap.toNanos();
        // Doubling stops at the cap, so the shift never overflows however many failures there were.
        int doublings = Math.min(failures - 1, 62);
        return base > (cap >> doublings) ? cap : Math.min(cap, base << doublings);
    }

    /** A wait after {@code failures} failed attempts, drawn from {@code random}: 0 .. the ceiling. */
    public Duration delay(int failures, RandomGenerator random) {
        return Duration.ofNanos(random.nextLong(ceilingNanos(failures) + 1));
    }
}
