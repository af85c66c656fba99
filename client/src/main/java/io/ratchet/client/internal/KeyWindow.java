package io.ratchet.client.internal;

import io.ratchet.client.Metrics;
import java.time.Duration;
import java.util.Arrays;

/**
 * One key's retry-loop figures over a sliding window: a ring of {@link #SLICES} time slices, each with
 * counts, the time spent on refused attempts, and a latency histogram of finished loops. A slice older
 * than the window is cleared when its place comes round again, so memory per key is fixed. Not
 * thread-safe: {@link Metrics} guards it.
 */
public final class KeyWindow {
    public static final int SLICES = 10;
    /** Latency buckets: bucket i holds loops up to {@code 100 µs × 2^((i + 1) / 2)}, √2 apart, to about 2 min. */
    static final int BUCKETS = 40;
    private static final long SMALLEST_NANOS = 100_000;

    private final long sliceNanos;
    private final long[] sliceOf = new long[SLICES];
    private final long[] attempts = new long[SLICES];
    private final long[] commits = new long[SLICES];
    private final long[] conflicts = new long[SLICES];
    private final long[] exhausted = new long[SLICES];
    private final long[] discardedNanos = new long[SLICES];
    private final int[][] latency = new int[SLICES][BUCKETS];

    public KeyWindow(Duration window) {
        this.sliceNanos = Math.max(1, window.toNanos() / SLICES);
        Arrays.fill(sliceOf, Long.MIN_VALUE);
    }

    public void attempted(long now) {
        attempts[slot(now)]++;
    }

    public void committed(long now) {
        commits[slot(now)]++;
    }

    public void conflicted(long now) {
        conflicts[slot(now)]++;
    }

    public void exhausted(long now) {
        exhausted[slot(now)]++;
    }

    public void discarded(long now, long nanos) {
        discardedNanos[slot(now)] += Math.max(0, nanos);
    }

    public void looped(long now, long nanos) {
        latency[slot(now)][bucket(nanos)]++;
    }

    /** The figures of the slices still inside the window at {@code now}. */
    public Metrics.WindowStats stats(String key, long now, Duration window) {
        long current = now / sliceNanos;
        long a = 0;
        long c = 0;
        long k = 0;
        long x = 0;
        long d = 0;
        long[] merged = new long[BUCKETS];
        long loops = 0;
        for (int i = 0; i < SLICES; i++) {
            if (sliceOf[i] > current - SLICES && sliceOf[i] <= current) {
                a += attempts[i];
                c += commits[i];
                k += conflicts[i];
                x += exhausted[i];
                d += discardedNanos[i];
                for (int b = 0; b < BUCKETS; b++) {
                    merged[b] += latency[i][b];
                    loops += latency[i][b];
                }
            }
        }
        return new Metrics.WindowStats(key, window, a, c, k, x, Duration.ofNanos(d), percentile(merged, loops, 0.99));
    }

    /** True when nothing was recorded inside the window at {@code now}: the key can be let go. */
    public boolean idle(long now) {
        long current = now / sliceNanos;
        for (long s : sliceOf) {
            if (s > current - SLICES && s <= current) {
                return false;
            }
        }
        return true;
    }

    private int slot(long now) {
        long slice = now / sliceNanos;
        int i = (int) Math.floorMod(slice, (long) SLICES);
        if (sliceOf[i] != slice) {
            sliceOf[i] = slice;
            attempts[i] = 0;
            commits[i] = 0;
            conflicts[i] = 0;
            exhausted[i] = 0;
            discardedNanos[i] = 0;
            Arrays.fill(latency[i], 0);
        }
        return i;
    }

    public static int bucket(long nanos) {
        if (nanos <= SMALLEST_NANOS) {
            return 0;
        }
        double halfDoublings = 2 * (Math.log((double) nanos / SMALLEST_NANOS) / Math.log(2));
        int b = (int) Math.ceil(halfDoublings) - 1;
        return Math.max(0, Math.min(BUCKETS - 1, b));
    }

    /** The upper bound of bucket {@code b}. */
    public static Duration upperBound(int b) {
        return Duration.ofNanos((long) (SMALLEST_NANOS * Math.pow(2, (b + 1) / 2.0)));
    }

    /** The upper bound of the bucket that holds the {@code q} quantile, or null with no loops. */
    private static Duration percentile(long[] buckets, long total, double q) {
        if (total == 0) {
            return null;
        }
        long rank = (long) Math.ceil(q * total);
        long seen = 0;
        for (int b = 0; b < BUCKETS; b++) {
            seen += buckets[b];
            if (seen >= rank) {
                return upperBound(b);
            }
        }
        return upperBound(BUCKETS - 1);
    }
}
