package io.ratchet.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
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

    private static void record(Metrics metrics, String key, int attempts, int commits, int conflicts) {
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
