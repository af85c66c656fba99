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
 * {@code unrequested-configuration-change}. On a cluster of several groups, only a configuration whose
 * groups agree is compared. Thread-safe.
 */
final class ConfigurationCheck {
    static final String NAME = "membership";

    /** The voters of the last configuration compared, and its index; null before the first and once unknown. */
    private List<String> voters;
    private long index;
    private int compared;
    /** The last configuration read, when its groups disagreed (a change stopped half way); else null. */
    private String disagreed;
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
        if (!now.agreed()) {
            // A change stopped half way in some groups: there is no one set of voters to compare.
            disagreed = now.toString();
            voters = null;
            return;
        }
        disagreed = null;
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
                        now.leader(), asked), List.of()));
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

    /**
     * Valid unless a comparison found a change nobody asked for; unknown when the last configuration read had
     * groups that disagree (a change left half way, so the run's end was never compared).
     */
    synchronized CheckResult result(String counts) {
        List<String> notes = new ArrayList<>();
        notes.add(String.format(Locale.ROOT,
                "%d settled configurations compared with the one the previous change left; %s", compared, counts));
        if (disagreed != null) {
            notes.add("the last configuration read has groups that differ (a change left half way): " + disagreed);
        }
        return CheckResult.of(NAME, anomalies, disagreed == null ? Validity.VALID : Validity.UNKNOWN, notes);
    }
}
