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
    MIXED;

    public String cliName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public boolean usesPartitions() {
        return this == PARTITION || this == MIXED;
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
