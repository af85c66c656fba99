package io.ratchet.client;

import io.ratchet.client.internal.KeyWindow;
import io.ratchet.protocol.Keys;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.ObjLongConsumer;

/**
 * Per-key counters of optimistic-concurrency loops: how many attempts each commit of a key took, how
 * often the key was the one that had moved (a conflict), and how often a loop gave up on it. The retry
 * loops in {@code io.ratchet.recipes.session} record here; an application that runs its own loop may
 * record too. Read it with {@link RatchetClient#metrics()}.
 *
 * <p>Reading the numbers: {@link KeyStats#attemptsPerCommit()} near 1.0 is healthy; above 2 the key is
 * hot (writers keep invalidating each other's reads) and the unit of work that writes it should be split
 * or serialized. A key written together with a hot key inherits its retries, so its attempts rise
 * too; {@link KeyStats#conflicts()} names the key that actually moved.
 *
 * <p>Beside these counts since the client started, the same figures over a sliding window (five
 * minutes by default; {@link #windowed}, {@link #topByConflictRate}): attempts per commit, the conflict
 * rate, loops exhausted, the 99th percentile of a loop's time, and the time spent on attempts that were
 * refused (discarded work). {@code io.ratchet.client.micrometer.RatchetClientMetrics} hands all of it
 * to a Micrometer registry, so an application's existing metrics pick it up: totals as counters, and the
 * keys with the highest conflict rate as gauges tagged with the key (at most {@link #EXPORTED_KEYS},
 * refreshed at most once a second).
 *
 * <p>Memory is bounded: at most {@link #MAX_KEYS} keys are counted, and {@link #MAX_WINDOWED_KEYS} have a
 * window (about 2 KB each), the least recently recorded one dropped first, so a hot key (recorded often)
 * stays. Keys compare case-insensitively, like items. Thread-safe.
 */
public final class Metrics {
    /** The most keys tracked at once. */
    public static final int MAX_KEYS = 10_000;
    /** The most keys with a sliding window at once. */
    public static final int MAX_WINDOWED_KEYS = 1024;
    /** How many keys are exported to Micrometer as tagged gauges: the highest conflict rates. */
    public static final int EXPORTED_KEYS = 10;
    /** The default sliding window. */
    public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(5);

    /**
     * One key's figures over the last {@code window}.
     *
     * @param discarded time spent on attempts that were refused: work thrown away
     * @param p99       the 99th percentile of a loop's time from its first attempt to its end (the
     *                  upper bound of a histogram bucket, at most √2 above the true value); null with no
     *                  finished loop in the window
     */
    public record WindowStats(String key, Duration window, long attempts, long commits, long conflicts, long exhausted,
                              Duration discarded, Duration p99) {
        /** Attempts per commit: 1.0 means no retries; infinite when attempts never committed; 0 when none. */
        public double attemptsPerCommit() {
            if (commits == 0) {
                return attempts == 0 ? 0 : Double.POSITIVE_INFINITY;
            }
            return (double) attempts / commits;
        }

        /** The share of attempts refused because the key had moved: 0 healthy, towards 1 hot. */
        public double conflictRate() {
            return attempts == 0 ? 0 : Math.min(1.0, (double) conflicts / attempts);
        }
    }

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
    private final Duration window;
    private final LongSupplier nanoClock;
    /** Access order, so the eldest entry is the least recently recorded key. */
    private final LinkedHashMap<String, Counters> byKey;
    /** Access order too; guarded by {@code byKey}. */
    private final LinkedHashMap<String, KeyWindow> windows;
    private final LongAdder attemptsTotal = new LongAdder();
    private final LongAdder commitsTotal = new LongAdder();
    private final LongAdder conflictsTotal = new LongAdder();
    private final LongAdder exhaustedTotal = new LongAdder();
    private final List<Runnable> exporters = new CopyOnWriteArrayList<>();
    /** When the exported keys were last chosen (the clock's nanoseconds); only read once bound. */
    private volatile long exportedAt;

    public Metrics() {
        this(MAX_KEYS);
    }

    /** With a custom bound on the keys tracked (at least 1). */
    public Metrics(int maxKeys) {
        this(maxKeys, DEFAULT_WINDOW, System::nanoTime);
    }

    /** With a custom bound, sliding window, and monotonic clock (nanoseconds; tests drive their own). */
    public Metrics(int maxKeys, Duration window, LongSupplier nanoClock) {
        if (maxKeys < 1) {
            throw new IllegalArgumentException("maxKeys must be at least 1, not " + maxKeys);
        }
        if (window == null || window.toMillis() < KeyWindow.SLICES) {
            throw new IllegalArgumentException("the window must be at least " + KeyWindow.SLICES + " ms, not " + window);
        }
        this.maxKeys = maxKeys;
        this.window = window;
        this.nanoClock = nanoClock;
        this.byKey = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Counters> eldest) {
                return size() > Metrics.this.maxKeys;
            }
        };
        this.windows = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, KeyWindow> eldest) {
                return size() > Math.min(MAX_WINDOWED_KEYS, Metrics.this.maxKeys);
            }
        };
    }

    /** A write of {@code key} was sent. */
    public void attempted(String key) {
        attemptsTotal.increment();
        update(key, c -> c.attempts++, KeyWindow::attempted);
    }

    /** A write of {@code key} was applied. */
    public void committed(String key) {
        commitsTotal.increment();
        update(key, c -> c.commits++, KeyWindow::committed);
    }

    /** An attempt failed because {@code key} had moved since it was read. */
    public void conflicted(String key) {
        conflictsTotal.increment();
        update(key, c -> c.conflicts++, KeyWindow::conflicted);
        exportSoon();
    }

    /** A loop gave up on a write of {@code key}. */
    public void exhausted(String key) {
        exhaustedTotal.increment();
        update(key, c -> c.exhausted++, KeyWindow::exhausted);
        exportSoon();
    }

    /** An attempt at {@code key} that was refused took {@code wasted}: work thrown away. */
    public void discarded(String key, Duration wasted) {
        window(key, (w, now) -> w.discarded(now, wasted.toNanos()));
    }

    /** A loop over {@code key} ended (committed, exhausted or failed) {@code took} after its first attempt. */
    public void looped(String key, Duration took) {
        window(key, (w, now) -> w.looped(now, took.toNanos()));
    }

    /** {@code key}'s figures over the sliding window; all zero when it has none. */
    public WindowStats windowed(String key) {
        synchronized (byKey) {
            KeyWindow w = windows.get(Keys.normalize(key));
            return w == null ? new WindowStats(key, window, 0, 0, 0, 0, Duration.ZERO, null)
                    : w.stats(keyOf(key), nanoClock.getAsLong(), window);
        }
    }

    /** The {@code n} keys with the highest conflict rate over the window (ties: most attempts), highest first. */
    public List<WindowStats> topByConflictRate(int n) {
        List<WindowStats> all = new ArrayList<>();
        synchronized (byKey) {
            long now = nanoClock.getAsLong();
            windows.forEach((id, w) -> {
                if (!w.idle(now)) {
                    all.add(w.stats(keyOf(id), now, window));
                }
            });
        }
        return all.stream()
                .filter(s -> s.attempts() > 0)
                .sorted(Comparator.comparingDouble(WindowStats::conflictRate).reversed()
                        .thenComparing(Comparator.comparingLong(WindowStats::attempts).reversed()))
                .limit(n)
                .toList();
    }

    /**
     * Runs {@code export} now, and again at most once a second as conflicts and exhausted loops are
     * recorded, so that whatever exports the hottest keys ({@link #topByConflictRate}) follows them:
     * {@code io.ratchet.client.micrometer.RatchetClientMetrics} points its tagged gauges at them.
     */
    public void onHotKeysChanged(Runnable export) {
        exporters.add(export);
        exportedAt = nanoClock.getAsLong();
        export.run();
    }

    /** The totals over all keys since the client started: attempts, commits, conflicts, exhausted loops. */
    public KeyStats totals() {
        return new KeyStats("", attemptsTotal.sum(), commitsTotal.sum(), conflictsTotal.sum(), exhaustedTotal.sum());
    }

    private void exportSoon() {
        long now = nanoClock.getAsLong();
        if (!exporters.isEmpty() && now - exportedAt >= 1_000_000_000L) {
            exportedAt = now;
            exporters.forEach(Runnable::run);
        }
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

    private void update(String key, Consumer<Counters> change, ObjLongConsumer<KeyWindow> windowed) {
        String id = Keys.normalize(key);
        long now = nanoClock.getAsLong();
        synchronized (byKey) {
            change.accept(byKey.computeIfAbsent(id, k -> new Counters(key)));
            windowed.accept(windows.computeIfAbsent(id, k -> new KeyWindow(window)), now);
        }
    }

    private void window(String key, ObjLongConsumer<KeyWindow> windowed) {
        String id = Keys.normalize(key);
        long now = nanoClock.getAsLong();
        synchronized (byKey) {
            byKey.computeIfAbsent(id, k -> new Counters(key));
            windowed.accept(windows.computeIfAbsent(id, k -> new KeyWindow(window)), now);
        }
    }

    /** Under the lock: the key as first recorded. */
    private String keyOf(String key) {
        Counters c = byKey.get(Keys.normalize(key));
        return c == null ? key : c.key;
    }
}
