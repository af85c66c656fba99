package io.ratchet.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.OpType;
import io.ratchet.chaos.nemesis.NemesisLoop;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A fault's gap is from the last answer before it to the first after it, writes and reads apart; a fault
 * that takes a while (a membership change) counts the longest wait for an answer while it ran.
 */
class AvailabilityTest {
    private final List<Op> history = new ArrayList<>();

    private void at(long millis, String workload, String process, OpType type, String f) {
        history.add(new Op(history.size(), millis * 1_000_000, process, type, workload, f, null, null, null, null));
    }

    private void answered(long millis, String f) {
        at(millis, "register", "1", OpType.OK, f);
    }

    @Test
    void eachFaultsGapRunsFromTheLastAnswerBeforeItToTheFirstAfter() {
        answered(100, "put");
        answered(110, "read");
        at(200, NemesisLoop.PROCESS, NemesisLoop.PROCESS, OpType.OK, "fault");
        at(900, "register", "2", OpType.FAIL, "put"); // no answer: does not end the gap
        answered(1_500, "read");
        answered(1_700, "put");
        answered(1_800, "watch"); // waits by design: not counted
        at(3_000, NemesisLoop.PROCESS, NemesisLoop.PROCESS, OpType.OK, "fault");
        answered(3_400, "put");
        answered(3_500, "read");
        at(9_000, "register", "final", OpType.OK, "read"); // after the run: not counted

        Availability a = Availability.of(history);
        assertEquals(List.of(1_600L, 1_700L), a.writeGapsMillis());
        assertEquals(List.of(1_390L, 2_000L), a.readGapsMillis());
        assertEquals(1_600L, Availability.median(a.writeGapsMillis()));
        assertEquals(1_700L, Availability.worst(a.writeGapsMillis()));
    }

    @Test
    void aChangeThatTakesSecondsCountsItsLongestWaitWhileItRanAndTwoNemesesDoNotMixTheirWindows() {
        answered(20, "put");
        at(50, NemesisLoop.PROCESS, "nemesis-membership", OpType.INVOKE, "fault");
        answered(100, "put");
        at(150, NemesisLoop.PROCESS, "nemesis-kill-leader", OpType.INVOKE, "fault");
        at(200, NemesisLoop.PROCESS, "nemesis-kill-leader", OpType.OK, "fault");
        answered(1_000, "put"); // the kill's gap: 100 -> 1,000
        answered(1_200, "put");
        answered(3_700, "put"); // the change's longest wait: 1,200 -> 3,700
        answered(3_800, "put");
        at(4_000, NemesisLoop.PROCESS, "nemesis-membership", OpType.OK, "fault");
        answered(4_100, "put");

        assertEquals(List.of(900L, 2_500L), Availability.of(history).writeGapsMillis(), "in the order the faults were done");
        assertEquals(List.of(), Availability.of(history).readGapsMillis(), "no reads, no read gaps");
    }
}
