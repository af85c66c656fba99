package io.ratchet.chaos.workload;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * The append workload's keys: a few slots, each holding one key at a time, so transactions contend. A
 * slot's key is retired after {@link #APPENDS_PER_KEY} appends and a fresh one takes its place (its next
 * generation): lists stay short, so a read costs little to record and the history does not grow with the
 * square of the run. Most slots' keys spread over the groups by hash; the rest share one hash tag, so
 * they are in one group whatever the key, and a transaction on them alone is a single-group transaction.
 * Thread-safe: the workload's processes plan their transactions here.
 */
final class AppendKeys {
    /** Appends a key takes before it is retired. */
    static final int APPENDS_PER_KEY = 32;
    private static final int SPREAD = 6;
    private static final int TAGGED = 3;
    /** The share of transactions on the tagged keys alone. */
    private static final double SINGLE_GROUP_SHARE = 1.0 / 3;

    /** One key of a planned transaction, to read or, with a value, to read and append to. */
    record Planned(String key, Long append) {
        boolean appends() {
            return append != null;
        }
    }

    private final String prefix;
    private final int[] generation = new int[SPREAD + TAGGED];
    private final int[] appends = new int[SPREAD + TAGGED];
    private final Set<String> used = new LinkedHashSet<>();
    private long nextValue;

    AppendKeys(String prefix) {
        this.prefix = prefix;
        for (int slot = 0; slot < generation.length; slot++) {
            used.add(key(slot));
        }
    }

    private String key(int slot) {
        String name = "k" + slot + "." + generation[slot];
        // Between braces, the tag: every tagged key is placed by it alone (docs/DESIGN.md, "Groups").
        return slot < SPREAD ? prefix + name : prefix + "{one}" + name;
    }

    /**
     * One to four distinct keys, each read or (half the time) appended to with a value no other append
     * carries; a third of the time only among the tagged keys.
     */
    synchronized List<Planned> plan(Random random) {
        boolean oneGroup = random.nextDouble() < SINGLE_GROUP_SHARE;
        int from = oneGroup ? SPREAD : 0;
        int slots = generation.length - from;
        int n = 1 + random.nextInt(Math.min(4, slots));
        Set<Integer> chosen = new LinkedHashSet<>();
        while (chosen.size() < n) {
            chosen.add(from + random.nextInt(slots));
        }
        List<Planned> plan = new ArrayList<>();
        for (int slot : chosen) {
            String key = key(slot);
            if (random.nextBoolean()) {
                plan.add(new Planned(key, ++nextValue));
                if (++appends[slot] == APPENDS_PER_KEY) {
                    appends[slot] = 0;
                    generation[slot]++;
                    used.add(key(slot));
                }
            } else {
                plan.add(new Planned(key, null));
            }
        }
        return plan;
    }

    /** Every key any transaction was planned on, or may be: what the final reads read. */
    synchronized List<String> used() {
        return List.copyOf(used);
    }
}
