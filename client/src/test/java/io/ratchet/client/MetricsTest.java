package io.ratchet.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class MetricsTest {

    @Test
    void attemptsPerCommitTellsAHotKeyFromAHealthyOne() {
        Metrics metrics = new Metrics();
        record(metrics, "accounts/calm", 10, 10, 0);
        record(metrics, "accounts/hot", 25, 10, 15);
        record(metrics, "ACCOUNTS/Hot", 0, 0, 1);

        assertEquals(1.0, metrics.stats("accounts/calm").attemptsPerCommit());
        Metrics.KeyStats hot = metrics.stats("accounts/HOT");
        assertEquals(new Metrics.KeyStats("accounts/hot", 25, 10, 16, 0), hot, "keys compare case-insensitively");
        assertEquals(2.5, hot.attemptsPerCommit());
        assertEquals(List.of("accounts/hot", "accounts/calm"), metrics.hottest(5).stream().map(Metrics.KeyStats::key).toList());
        assertEquals(0.0, metrics.stats("never/seen").attemptsPerCommit());
    }

    @Test
    void memoryIsBoundedAndTheLeastRecentlyRecordedKeyGoesFirst() {
        Metrics metrics = new Metrics(3);
        for (int i = 0; i < 100; i++) {
            metrics.attempted("hot");
            metrics.attempted("cold/" + i);
        }
        assertEquals(3, metrics.all().size());
        assertEquals(100, metrics.stats("hot").attempts(), "a key recorded often stays tracked");
        assertTrue(metrics.stats("cold/0").attempts() == 0, "an old one was dropped");
    }

    @Test
    void theWindowSlidesAndForgetsWhatFellOutOfIt() {
        AtomicLong now = new AtomicLong(1_000_000_000L);
        Metrics metrics = new Metrics(100, Duration.ofSeconds(10), now::get);
        record(metrics, "counters/hot", 8, 2, 6);
        metrics.exhausted("counters/hot");
        metrics.discarded("counters/hot", Duration.ofMillis(30));
        Metrics.WindowStats hot = metrics.windowed("COUNTERS/HOT");
        assertEquals("counters/hot", hot.key());
        assertEquals(8, hot.attempts());
        assertEquals(4.0, hot.attemptsPerCommit());
        assertEquals(0.75, hot.conflictRate());
        assertEquals(1, hot.exhausted());
        assertEquals(Duration.ofMillis(30), hot.discarded());

        now.addAndGet(Duration.ofSeconds(6).toNanos());
        record(metrics, "counters/hot", 2, 2, 0);
        assertEquals(10, metrics.windowed("counters/hot").attempts(), "6 s later both are inside a 10 s window");
        now.addAndGet(Duration.ofSeconds(6).toNanos());
        Metrics.WindowStats later = metrics.windowed("counters/hot");
        assertEquals(2, later.attempts(), "12 s after the first records only the later ones are left");
        assertEquals(0.0, later.conflictRate());
        assertEquals(10, metrics.stats("counters/hot").attempts(), "the totals since start keep everything");
        now.addAndGet(Duration.ofSeconds(11).toNanos());
        assertEquals(0, metrics.windowed("counters/hot").attempts());
        assertEquals(List.of(), metrics.topByConflictRate(5), "an idle key is no longer among the top");
    }

    @Test
    void theP99IsTheBucketThatHoldsTheSlowestPercent() {
        Metrics metrics = new Metrics(100, Duration.ofMinutes(5), new AtomicLong(5)::get);
        assertEquals(null, metrics.windowed("k").p99());
        for (int i = 0; i < 99; i++) {
            metrics.looped("k", Duration.ofMillis(2));
        }
        metrics.looped("k", Duration.ofSeconds(3));
        Duration p99 = metrics.windowed("k").p99();
        assertTrue(p99.compareTo(Duration.ofMillis(2)) >= 0 && p99.compareTo(Duration.ofMillis(3)) < 0,
                "99 of 100 loops took 2 ms: the p99 bucket's bound is within √2 above it, not " + p99);
        for (int i = 0; i < 5; i++) {
            metrics.looped("k", Duration.ofSeconds(3));
        }
        Duration slow = metrics.windowed("k").p99();
        assertTrue(slow.compareTo(Duration.ofSeconds(3)) >= 0 && slow.compareTo(Duration.ofMillis(4_250)) < 0, slow.toString());
    }

    static void record(Metrics metrics, String key, int attempts, int commits, int conflicts) {
        for (int i = 0; i < attempts; i++) {
            metrics.attempted(key);
        }
        for (int i = 0; i < commits; i++) {
            metrics.committed(key);
        }
        for (int i = 0; i < conflicts; i++) {
            metrics.conflicted(key);
        }
    }
}
