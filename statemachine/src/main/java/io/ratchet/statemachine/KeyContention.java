package io.ratchet.statemachine;

import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Result;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How often each contended key's conditions were tried, held and were refused, counted as entries are
 * applied: the server-side view of a hot key (attempts per commit, per key). A key is counted from its
 * first refused condition on, so a key nobody contends costs apply one lookup and no allocation (a
 * create-only put of a fresh key, the commonest write, is never tracked). Not replicated state and
 * never read by apply; every node applies the same entries, so every node counts the same since it
 * started (the leader also counts the conditions it refuses before the log, {@link #refusedBeforeLog}).
 * Bounded: past {@link #MAX_KEYS} keys, the half with the least contention is dropped.
 */
public final class KeyContention {
    static final int MAX_KEYS = 8192;

    /** One key's counts. {@code attemptsPerCommit} is null for a key that never committed. */
    public record Counts(String key, long attempts, long commits, long refused) {
        public Double attemptsPerCommit() {
            return commits == 0 ? null : (double) attempts / commits;
        }
    }

    private static final class Counter {
        final String key;
        long attempts;
        long commits;
        long refused;
        /** The index of the latest write to the key this node applied since the key was tracked (0: none yet). */
        long replacedBelow;

        Counter(String key) {
            this.key = key;
        }

        Counts counts() {
            return new Counts(key, attempts, commits, refused);
        }
    }

    private final Map<String, Counter> counters = new HashMap<>();
    private final long since;

    /** @param since when counting began (epoch milliseconds; reported only, never used in apply) */
    public KeyContention(long since) {
        this.since = since;
    }

    public long since() {
        return since;
    }

    /**
     * One condition on {@code key} was evaluated; {@code committed} when its write landed (false for a
     * condition that held in a transaction that another condition failed: neither a commit nor a refusal);
     * {@code writtenAt} the index the write put on the key as it landed (0: it wrote nothing now, as a check,
     * or a prepare, whose writes land at its settle if at all), which {@link #replacedBelow} follows.
     */
    synchronized void evaluated(String normalizedKey, String key, boolean held, boolean committed, long writtenAt) {
        Counter c = held ? counters.get(normalizedKey) : counters.computeIfAbsent(normalizedKey, k -> new Counter(key));
        if (c == null) {
            return;
        }
        c.attempts++;
        if (committed) {
            c.commits++;
        }
        if (!held) {
            c.refused++;
        }
        // Every index below a write's is gone for good: a key's index only grows (a removed key comes back later).
        if (writtenAt > c.replacedBelow) {
            c.replacedBelow = writtenAt;
        }
        if (counters.size() > MAX_KEYS) {
            shrink();
        }
    }

    /**
     * An index below which no write to the key can ever again find its condition held: the latest write this
     * node applied to it, when the key is tracked; 0 when not known. Never more than the key's index now,
     * whatever entries follow, so a condition naming a lower index (and not 0) fails now and forever.
     */
    public synchronized long replacedBelow(String normalizedKey) {
        Counter c = counters.get(normalizedKey);
        return c == null ? 0 : c.replacedBelow;
    }

    /** The leader refused a condition on {@code key} before the log (see {@link #replacedBelow}): an attempt refused. */
    public void refusedBeforeLog(String normalizedKey, String key) {
        evaluated(normalizedKey, key, false, false, 0);
    }

    /** The {@code limit} keys refused most often (ties: most attempts), most first. */
    public synchronized List<Counts> hottest(int limit) {
        return counters.values().stream().map(Counter::counts).sorted(HOTTEST).limit(limit).toList();
    }

    /** The answer to {@link io.ratchet.protocol.Query.Contention}: the {@code limit} hottest keys and since when they are counted. */
    public Result.Contention answer(int limit) {
        return new Result.Contention(since(), hottest(limit).stream()
                .map(k -> new Result.KeyContention(k.key(), k.attempts(), k.commits(), k.refused())).toList());
    }

    private static final Comparator<Counts> HOTTEST = Comparator.comparingLong(Counts::refused)
            .thenComparingLong(Counts::attempts).reversed().thenComparing(Counts::key);

    private void shrink() {
        List<Counts> all = new ArrayList<>(counters.size());
        counters.values().forEach(c -> all.add(c.counts()));
        all.sort(HOTTEST);
        for (Counts dropped : all.subList(MAX_KEYS / 2, all.size())) {
            counters.remove(Keys.normalize(dropped.key()));
        }
    }
}
