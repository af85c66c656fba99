package io.ratchet.chaos.nemesis;

import io.ratchet.chaos.checker.Anomaly;
import io.ratchet.chaos.checker.CheckResult;
import io.ratchet.chaos.checker.Validity;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * The membership check of a run: voters change only through the membership nemesis' own changes (kills
 * do not change them). Every settled configuration it reads is compared with the one before, plus the node
 * its change added or minus the one it removed; any other difference is an
 * {@code unrequested-configuration-change}. Thread-safe.
 */
final class ConfigurationCheck {
    static final String NAME = "membership";

    /** The voters of the last configuration compared, and its index; null before the first and once unknown. */
    private List<String> voters;
    private long index;
    private int compared;
    private final List<Anomaly> anomalies = new ArrayList<>();
    private final List<String> lines = new ArrayList<>();

    /** The voters the next comparison starts from, or null when they are unknown. */
    synchronized List<String> voters() {
        return voters;
    }

    /**
     * Compares {@code now} with {@code before} (voters a caller read with {@link #voters()} before its change),
     * {@code added} joined and {@code removed} gone; a difference is an anomaly, reported once: {@code now} is
     * the new base. Nothing is compared when {@code before} is null.
     */
    synchronized void compare(SettledConfiguration now, List<String> before, String added, String removed, String when) {
        compared++;
        List<String> seen = now.voters();
        if (before != null) {
            List<String> wanted = new ArrayList<>(before);
            if (added != null) {
                wanted.add(added);
            }
            wanted.remove(removed);
            Collections.sort(wanted);
            if (!wanted.equals(seen)) {
                String asked = added != null ? "adding " + added : removed != null ? "removing " + removed : "no change";
                anomalies.add(new Anomaly(NAME, "unrequested-configuration-change", null, String.format(Locale.ROOT,
                        "the voters were %s in the configuration at index %d; %s they are %s (index %d, leader %s), "
                                + "though only %s was asked for", before, index, when, seen, now.index(),
                        now.leader().id(), asked), List.of()));
                lines.add("UNREQUESTED CONFIGURATION CHANGE " + when + ": voters " + before + " -> " + seen
                        + " (wanted " + wanted + ")");
            }
        }
        voters = seen;
        index = now.index();
    }

    /** After a change whose outcome stayed unknown: the next configuration read is the new base. */
    synchronized void forget() {
        voters = null;
    }

    synchronized List<String> lines() {
        return List.copyOf(lines);
    }

    synchronized CheckResult result(String counts) {
        return CheckResult.of(NAME, anomalies, Validity.VALID, List.of(String.format(Locale.ROOT,
                "%d settled configurations compared with the one the previous change left; %s", compared, counts)));
    }
}
