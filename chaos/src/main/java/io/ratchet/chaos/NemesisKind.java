package io.ratchet.chaos;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The nemeses a run can choose, by their command-line names. */
public enum NemesisKind {
    /** No faults: a baseline. */
    NONE,
    /** kill -9 of the current leader, restarted after the fault spell. */
    KILL_LEADER,
    /** kill -9 of any node. */
    KILL_ANY,
    /** SIGSTOP of the leader or any node, SIGCONT after the fault spell. */
    PAUSE,
    /** Network partitions: the leader isolated, or a random majority/minority split. Needs network namespaces. */
    PARTITION,
    /** Each fault drawn from kill-leader, kill-any, pause and (where namespaces work) partition. */
    MIXED,
    /** Membership changes: grow, shrink, replace a node, transfer leadership; between 3 and 5 voters. */
    MEMBERSHIP,
    /** Membership changes and kill-leader at once, each on its own schedule, so kills land during changes. */
    MEMBERSHIP_KILL_LEADER("membership+kill-leader"),
    /**
     * A node's wall clock stepped one to five minutes ahead or back, or a node restarted on a clock 5 to 30 s
     * ahead and made the leader; back to true time when healed. Needs a C compiler.
     */
    CLOCK,
    /** A node's disk stalls its fsyncs for seconds, or fails with EIO. Needs a C compiler. */
    DISK,
    /** A node held to 10% of a core (a starved VM). Needs a writable CPU control group (root). */
    SLOW,
    /**
     * Everything at once: membership changes on one schedule, and on another each fault drawn from
     * kill-leader, kill-any, pause, partition (where namespaces work), clock and disk (where they can be made),
     * and slow (where control groups can be written).
     */
    ALL;

    private final String cliName;

    NemesisKind() {
        this.cliName = name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    NemesisKind(String cliName) {
        this.cliName = cliName;
    }

    public String cliName() {
        return cliName;
    }

    public boolean usesPartitions() {
        return this == PARTITION || this == MIXED || this == ALL;
    }

    /** Whether nodes join and leave: the run then has spare node slots beside the initial nodes. */
    public boolean changesMembership() {
        return this == MEMBERSHIP || this == MEMBERSHIP_KILL_LEADER || this == ALL;
    }

    /** Whether nodes step their clocks: they run with the fault library preloaded. */
    public boolean stepsClocks() {
        return this == CLOCK || this == ALL;
    }

    /** Whether nodes' disks fail: they run with the disk fault library preloaded. */
    public boolean breaksDisks() {
        return this == DISK || this == ALL;
    }

    public static NemesisKind parse(String text) {
        for (NemesisKind kind : values()) {
            if (kind.cliName().equals(text)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown nemesis '" + text + "'; choose one of " + names());
    }

    public static String names() {
        return Arrays.stream(values()).map(NemesisKind::cliName).collect(Collectors.joining(", "));
    }
}
