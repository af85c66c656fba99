package io.ratchet.client;

import io.ratchet.protocol.Keys;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Per-key counters of optimistic-concurrency loops: how many attempts each commit of a key took, how
 * often the key was the one that had moved (a conflict), and how often a loop gave up on it. The retry
 * loops in {@code io.ratchet.client.session} record here; an application that runs its own loop may
 * record too. Read it with {@link RatchetClient#metrics()}.
 *
 * <p>Reading the numbers: {@link KeyStats#attemptsPerCommit()} near 1.0 is healthy; above 2 the key is
 * hot (writers keep invalidating each other's reads) and the unit of work that writes it should be split
 * or serialized. A key written together with a hot key inherits its retries, so its attempts rise
 * too; {@link KeyStats#conflicts()} names the key that actually moved.
 *
 * <p>Memory is bounded: at most {@link #MAX_KEYS} keys are tracked, the least recently recorded one
 * dropped first, so a hot key (recorded often) stays. Keys compare case-insensitively, like items.
 * Thread-safe.
 */
public final class Metrics {
    /** The most keys tracked at once. */
    public static final int MAX_KEYS = 10_000;

    /**
     * One key's counters.
     *
     * @param key       the key as first recorded
     * @param attempts  writes of the key that were sent (each retry counts)
     * @param commits   writes of the key that were applied
     * @param conflicts attempts that failed because this key had moved since it was read
     * @param exhausted loops that gave up on a write of this key after their last attempt
     */
    public record KeyStats(String key, long attempts, long commits, long conflicts, long exhausted) {

        /** Attempts per commit: 1.0 means no retries; infinite when attempts never committed; 0 when none. */
        public double attemptsPerCommit() {
            if (commits == 0) {
                return attempts == 0 ? 0 : Double.POSITIVE_INFINITY;
            }
            return (double) attempts / commits;
        }
    }

    /** Mutable counters behind one key; only touched under the map's lock. */
    private static final class Counters {
        final String key;
        long attempts;
        long commits;
        long conflicts;
        long exhausted;

        Counters(String key) {
            this.key = key;
        }

        KeyStats snapshot() {
            return new KeyStats(key, attempts, commits, conflicts, exhausted);
        }
    }

    private final int maxKeys;
    /** Access order, so the eldest entry is the least recently recorded key. */
    private final LinkedHashMap<String, Counters> byKey;

    public Metrics() {
        this(MAX_KEYS);
    }

    /** With a custom bound on the keys tracked (at least 1). */
    public Metrics(int maxKeys) {
        if (maxKeys < 1) {
            throw new IllegalArgumentException("maxKeys must be at least 1, not " + maxKeys);
        }
        this.maxKeys = maxKeys;
        this.byKey = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Counters> eldest) {
                return size() > Metrics.this.maxKeys;
            }
        };
    }

    /** A write of {@code key} was sent. */
    public void attempted(String key) {
        update(key, c -> c.attempts++);
    }

    /** A write of {@code key} was applied. */
    public void committed(String key) {
        update(key, c -> c.commits++);
    }

    /** An attempt failed because {@code key} had moved since it was read. */
    public void conflicted(String key) {
        update(key, c -> c.conflicts++);
    }

    /** A loop gave up on a write of {@code key}. */
    public void exhausted(String key) {
        update(key, c -> c.exhausted++);
    }

    /** The counters of {@code key}; all zero when it is not tracked. */
    public KeyStats stats(String key) {
        synchronized (byKey) {
            Counters c = byKey.get(Keys.normalize(key));
            return c == null ? new KeyStats(key, 0, 0, 0, 0) : c.snapshot();
        }
    }

    /** Every tracked key's counters, least recently recorded first. */
    public List<KeyStats> all() {
        synchronized (byKey) {
            List<KeyStats> all = new ArrayList<>(byKey.size());
            byKey.values().forEach(c -> all.add(c.snapshot()));
            return all;
        }
    }

    /** The {@code n} keys with the most attempts per commit (ties: the most conflicts first). */
    public List<KeyStats> hottest(int n) {
        return all().stream()
                .sorted(Comparator.comparingDouble(KeyStats::attemptsPerCommit).reversed()
                        .thenComparing(Comparator.comparingLong(KeyStats::conflicts).reversed()))
                .limit(n)
                .toList();
    }

    private void update(String key, Consumer<Counters> change) {
        String id = Keys.normalize(key);
        synchronized (byKey) {
            change.accept(byKey.computeIfAbsent(id, k -> new Counters(key)));
        }
    }
}
