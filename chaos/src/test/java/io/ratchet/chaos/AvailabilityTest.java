package io.ratchet.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ratchet.chaos.Availability.Gap;
import io.ratchet.chaos.Availability.Of;
import io.ratchet.chaos.checker.Anomaly;
import io.ratchet.chaos.checker.CheckResult;
import io.ratchet.chaos.checker.Validity;
import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.OpType;
import io.ratchet.chaos.nemesis.NemesisLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A fault's gap, per workload, is the longest an operation waited for the workload's next success, from the
 * fault until five seconds after its heal: stalls that begin after the injection or around the heal count,
 * waits that ran out, failures and unknown outcomes do not end one, and writes and reads are apart.
 */
class AvailabilityTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PUT_OK = "{\"successful\":true}";

    private final List<Op> lines = new ArrayList<>();
    private int processes;

    // ---- a history written by hand: each operation its own process, lines put in time order at the end

    private void op(String workload, String f, long from, long to, OpType type, String input, String output) {
        String process = Integer.toString(processes++);
        lines.add(new Op(0, from * 1_000_000, process, OpType.INVOKE, workload, f, null, json(input), null, null));
        lines.add(new Op(0, to * 1_000_000, process, type, workload, f, null, json(input),
                type == OpType.OK ? json(output) : null, type == OpType.OK ? null : "UnknownOutcomeException: timed out"));
    }

    private void put(String workload, long from, long to, OpType type) {
        op(workload, "put", from, to, type, "{}", PUT_OK);
    }

    private void read(String workload, long from, long to, OpType type) {
        op(workload, "read", from, to, type, "{}", "{}");
    }

    /** Puts answered in 5 ms, one every 100 ms, from {@code from} to before {@code to}. */
    private void steadyPuts(String workload, long from, long to) {
        for (long t = from; t < to; t += 100) {
            put(workload, t, t + 5, OpType.OK);
        }
    }

    private void steadyReads(String workload, long from, long to) {
        for (long t = from; t < to; t += 100) {
            read(workload, t, t + 5, OpType.OK);
        }
    }

    /** A fault by {@code process}, begun at {@code from} and done at {@code done}. */
    private void fault(String process, long from, long done, String kind, String description) {
        lines.add(new Op(0, from * 1_000_000, process, OpType.INVOKE, NemesisLoop.PROCESS, "fault", null, json("{}"), null, null));
        lines.add(new Op(0, done * 1_000_000, process, OpType.OK, NemesisLoop.PROCESS, "fault", null, json("{}"),
                json("{\"kind\":\"" + kind + "\",\"fault\":\"" + description + "\"}"), null));
    }

    private void kill(long from, long done) {
        fault(NemesisLoop.PROCESS, from, done, "kill", "killed n2 (the leader, pid 4711)");
    }

    private void heal(String process, long from, long done) {
        lines.add(new Op(0, from * 1_000_000, process, OpType.INVOKE, NemesisLoop.PROCESS, "heal", null, json("{}"), null, null));
        lines.add(new Op(0, done * 1_000_000, process, OpType.OK, NemesisLoop.PROCESS, "heal", null, json("{}"), json("{}"), null));
    }

    private List<Op> history() {
        List<Op> sorted = new ArrayList<>(lines);
        sorted.sort(Comparator.comparingLong(Op::time)); // stable: an invocation stays before its completion
        List<Op> indexed = new ArrayList<>();
        for (Op op : sorted) {
            indexed.add(new Op(indexed.size(), op.time(), op.process(), op.type(), op.workload(), op.f(), op.key(), op.input(),
                    op.output(), op.error()));
        }
        return indexed;
    }

    private Availability measure() {
        return Availability.of(history(), Set.of());
    }

    private static Gap gap(Availability a, int fault, String workload, Of of) {
        return a.gaps().stream().filter(g -> g.fault() == a.faults().get(fault) && g.workload().equals(workload) && g.of() == of)
                .findFirst().orElse(null);
    }

    private static JsonNode json(String text) {
        try {
            return text == null ? null : JSON.readTree(text);
        } catch (Exception e) {
            throw new IllegalArgumentException(text, e);
        }
    }

    // ---- the stories

    @Test
    void aStallThatBeginsASecondAfterTheKillIsTheKillsGapThoughAWriteSucceededRightAfterIt() {
        steadyPuts("register", 0, 2_000);
        kill(1_000, 1_050);
        put("register", 2_050, 3_000, OpType.INFO); // stalled from 2,050
        put("register", 3_010, 3_400, OpType.FAIL);
        put("register", 3_450, 3_500, OpType.OK); // the first success since
        steadyPuts("register", 3_600, 10_000);
        heal(NemesisLoop.PROCESS, 4_000, 4_500);

        Gap g = gap(measure(), 0, "register", Of.WRITE);
        assertEquals(1_450, g.millis(), "from the stalled write's invocation to the next success");
        assertFalse(g.open());
        assertEquals(3, g.lines().size());
        List<Op> h = history();
        assertEquals(2_050_000_000L, h.get((int) g.waiting()).time());
        assertEquals(3_500_000_000L, h.get((int) g.ended()).time());
    }

    @Test
    void aStallAroundTheHealCountsAndOneAfterTheSettleDoesNot() {
        steadyPuts("register", 0, 4_000);
        kill(1_000, 1_050);
        heal(NemesisLoop.PROCESS, 3_000, 3_200); // the window ends at 8,200
        put("register", 4_000, 5_000, OpType.INFO); // the restarted node catching up under load
        put("register", 6_100, 6_200, OpType.OK);
        steadyPuts("register", 6_300, 9_000);
        put("register", 9_000, 12_000, OpType.INFO); // after the window: another story
        put("register", 12_000, 12_005, OpType.OK);

        assertEquals(2_200, gap(measure(), 0, "register", Of.WRITE).millis());
    }

    @Test
    void failedAndUnknownOutcomesDoNotEndAGap() {
        steadyPuts("register", 0, 1_000);
        kill(1_000, 1_050);
        put("register", 1_100, 2_100, OpType.INFO);
        put("register", 2_150, 2_600, OpType.FAIL);
        put("register", 2_650, 2_700, OpType.OK);
        steadyPuts("register", 2_800, 5_000);
        heal(NemesisLoop.PROCESS, 1_500, 1_600);

        assertEquals(1_600, gap(measure(), 0, "register", Of.WRITE).millis());
    }

    @Test
    void anAcquireWhoseWaitRanOutIsNotASuccessButARefusedTryIsAnAnswer() {
        op("semaphore", "acquire", 500, 600, OpType.OK, "{\"wait_ms\":2000}", "{\"granted\":true}");
        op("locks", "acquire", 500, 600, OpType.OK, "{}", "{\"granted\":true}");
        kill(1_000, 1_050);
        // The semaphore's client timer ran out after 2 s: a stalled cluster looks the same.
        op("semaphore", "acquire", 1_100, 3_100, OpType.OK, "{\"wait_ms\":2000}", "{\"granted\":false}");
        op("semaphore", "acquire", 3_150, 3_200, OpType.OK, "{\"wait_ms\":2000}", "{\"granted\":true}");
        // A fair lock's grant given back as too late.
        op("fair-lock", "acquire", 500, 600, OpType.OK, "{\"wait_ms\":500}", "{\"granted\":true}");
        op("fair-lock", "acquire", 1_100, 1_900, OpType.OK, "{\"wait_ms\":500}", "{\"granted\":false,\"lost\":true}");
        op("fair-lock", "acquire", 1_950, 2_000, OpType.OK, "{\"wait_ms\":500}", "{\"granted\":true}");
        // A lock held by another: the cluster answered the try.
        op("locks", "acquire", 1_100, 1_150, OpType.OK, "{}", "{\"granted\":false}");
        heal(NemesisLoop.PROCESS, 1_500, 1_600);

        Availability a = measure();
        assertEquals(2_100, gap(a, 0, "semaphore", Of.WRITE).millis());
        assertEquals(900, gap(a, 0, "fair-lock", Of.WRITE).millis());
        assertEquals(50, gap(a, 0, "locks", Of.WRITE).millis());
    }

    @Test
    void aWaiterWithoutAGrantServedItsJoinWhenTheJoinWasAnswered() {
        op("fair-lock", "acquire", 500, 600, OpType.OK, "{\"wait_ms\":500}", "{\"granted\":true}");
        kill(1_000, 1_050);
        // Joined 300 ms after it began (at 1,400), then waited its 1.6 s out: the cluster served the join.
        op("fair-lock", "acquire", 1_100, 3_000, OpType.OK, "{\"wait_ms\":1600}",
                "{\"granted\":false,\"queued\":7,\"joined_us\":300000}");
        op("fair-lock", "acquire", 3_100, 3_200, OpType.OK, "{\"wait_ms\":500}", "{\"granted\":true}");
        heal(NemesisLoop.PROCESS, 1_500, 1_600);

        Availability a = measure();
        // 300, not 2,100: a history without joined_us counts only grants (anAcquireWhoseWaitRanOutIsNotASuccessButARefusedTryIsAnAnswer).
        assertEquals(300, gap(a, 0, "fair-lock", Of.WRITE).millis());
    }

    @Test
    void aFailedConditionIsAnAnswerButATransferNotAppliedIsNot() {
        put("register", 500, 600, OpType.OK);
        op("bank", "transfer", 500, 600, OpType.OK, "{}", "{\"applied\":true}");
        kill(1_000, 1_050);
        op("register", "put", 1_100, 1_120, OpType.OK, "{}", "{\"successful\":false}");
        // From an account to itself: the ledger answers without asking the cluster.
        op("bank", "transfer", 1_100, 1_101, OpType.OK, "{}", "{\"applied\":false}");
        op("bank", "transfer", 1_200, 1_300, OpType.OK, "{}", "{\"applied\":true}");
        heal(NemesisLoop.PROCESS, 1_500, 1_600);

        Availability a = measure();
        assertEquals(20, gap(a, 0, "register", Of.WRITE).millis());
        assertEquals(200, gap(a, 0, "bank", Of.WRITE).millis());
    }

    @Test
    void readsAndWritesAreMeasuredApart() {
        steadyPuts("register", 0, 5_000);
        steadyReads("register", 0, 1_000);
        kill(1_000, 1_050);
        read("register", 1_100, 2_900, OpType.FAIL);
        read("register", 2_950, 3_000, OpType.OK);
        steadyReads("register", 3_100, 5_000);
        op("watch", "watch", 1_100, 4_900, OpType.OK, "{}", "{\"changed\":false}"); // waits by design: neither
        heal(NemesisLoop.PROCESS, 1_500, 1_600);

        Availability a = measure();
        assertEquals(5, gap(a, 0, "register", Of.WRITE).millis(), "writes went on");
        assertEquals(1_900, gap(a, 0, "register", Of.READ).millis());
        assertNull(gap(a, 0, "watch", Of.READ));
        assertNull(gap(a, 0, "watch", Of.WRITE));
    }

    @Test
    void aWorkloadThatReadsSeldomHasNoGapForTheTimeItDidNotTry() {
        read("locks", 200, 210, OpType.OK);
        kill(1_000, 1_050);
        heal(NemesisLoop.PROCESS, 1_500, 1_600);
        read("locks", 5_000, 5_010, OpType.OK); // its next read, long after

        assertEquals(10, gap(measure(), 0, "locks", Of.READ).millis());
    }

    @Test
    void aWaitNoSuccessEndedIsOpenAndRunsToTheWorkloadsLastLine() {
        steadyPuts("register", 0, 1_000);
        kill(1_000, 1_050);
        put("register", 1_100, 3_000, OpType.INFO);
        heal(NemesisLoop.PROCESS, 1_500, 1_600);

        Gap g = gap(measure(), 0, "register", Of.WRITE);
        assertTrue(g.open());
        assertEquals(1_900, g.millis());
        assertTrue(g.describe().contains("or more"), g.describe());
    }

    @Test
    void aWindowEndsWhereTheSameNemesisBeginsItsNextFaultAndAnotherNemesisKeepsItsOwn() {
        steadyPuts("register", 0, 3_500);
        kill(1_000, 1_050);
        heal(NemesisLoop.PROCESS, 1_500, 1_600);
        fault("nemesis-membership", 2_000, 2_500, "grow", "grew: added n4 on empty storage");
        kill(3_000, 3_050); // ends the first kill's window
        put("register", 3_500, 5_000, OpType.INFO);
        put("register", 5_000, 5_100, OpType.OK);
        steadyPuts("register", 5_200, 9_000);
        heal(NemesisLoop.PROCESS, 4_000, 4_100);

        Availability a = measure();
        assertEquals(List.of("kill", "grow", "kill"), a.faults().stream().map(Availability.Fault::kind).toList());
        assertEquals(5, gap(a, 0, "register", Of.WRITE).millis(), "the stall began after the next kill");
        assertEquals(1_600, gap(a, 1, "register", Of.WRITE).millis(), "within 5 s of the change");
        assertEquals(1_600, gap(a, 2, "register", Of.WRITE).millis());
        assertEquals("n4", a.faults().get(1).node());
    }

    @Test
    void aWaitThatRunsIntoTheSameNemesisNextFaultIsThatFaultsFromItsStart() {
        steadyPuts("register", 0, 2_900);
        kill(1_000, 1_050);
        heal(NemesisLoop.PROCESS, 1_500, 1_600);
        put("register", 2_950, 4_000, OpType.INFO); // sent just before the next kill, and stalled by it
        kill(3_000, 3_050);
        put("register", 4_000, 4_500, OpType.OK);
        steadyPuts("register", 4_600, 9_000);
        heal(NemesisLoop.PROCESS, 4_000, 4_100);

        Availability a = measure();
        Gap first = gap(a, 0, "register", Of.WRITE);
        assertEquals(50, first.millis(), "up to the next kill only");
        assertFalse(first.open());
        assertTrue(first.describe().contains("until the next fault began"), first.describe());
        assertEquals(1_500, gap(a, 1, "register", Of.WRITE).millis(), "from the next kill on");
    }

    /** Three kills whose gaps are 300, 500 and 900 ms, and a pause of 200 ms. */
    private Availability threeKillsAndAPause() {
        long[] gaps = {300, 500, 900, 200};
        for (int i = 0; i < gaps.length; i++) {
            long t = 10_000L * i;
            put("register", t - 60, t - 50, OpType.OK);
            if (i < 3) {
                fault(NemesisLoop.PROCESS, t, t + 10, "kill", "killed n" + (i + 1) + " (the leader, pid 9)");
            } else {
                fault(NemesisLoop.PROCESS, t, t + 10, "pause", "paused n1 (a follower, pid 9)");
            }
            put("register", t + 100, t + 100 + gaps[i], OpType.OK);
            steadyPuts("register", t + 1_100, t + 9_000);
            heal(NemesisLoop.PROCESS, t + 1_000, t + 1_010);
        }
        return Availability.of(history(), Set.of());
    }

    @Test
    void theSummaryGivesMedianAndWorstPerKindOfFaultAndNamesTheWorstGapsFaultAndWorkload() {
        Availability a = threeKillsAndAPause();
        JsonNode gaps = JSON.valueToTree(a.json(null));

        JsonNode kill = gaps.path("by_fault").path("kill");
        assertEquals(3, kill.path("faults").asInt());
        assertEquals(500, kill.path("write_ms").path("median").asLong());
        assertEquals(900, kill.path("write_ms").path("worst").asLong());
        assertEquals(200, gaps.path("by_fault").path("pause").path("write_ms").path("worst").asLong());
        assertTrue(kill.path("read_ms").isMissingNode(), "no reads, no read figures: " + kill);

        JsonNode worst = gaps.path("worst");
        assertEquals("write", worst.path("of").asText());
        assertEquals(900, worst.path("ms").asLong());
        assertEquals("register", worst.path("workload").asText());
        assertEquals("kill", worst.path("fault").asText());
        assertEquals("n3", worst.path("node").asText());
        assertEquals(20.01, worst.path("at_s").asDouble(), "when it was done, as the timeline says");
        assertEquals(5_000, gaps.path("settle_ms").asLong());

        String report = String.join("\n", a.report(null));
        assertTrue(report.contains("kill                 3        500 ms    900 ms"), report);
        assertTrue(report.contains("worst: register write 900 ms, kill at 20.01 s: killed n3"), report);
    }

    @Test
    void aGapLongerThanMaxGapFailsTheRunAsAnAnomalyNamingItsFaultAndWorkload() {
        Availability a = threeKillsAndAPause();

        CheckResult failed = a.check(Duration.ofMillis(600));
        assertEquals(Validity.INVALID, failed.validity());
        assertEquals(1, failed.anomalies().size());
        Anomaly over = failed.anomalies().get(0);
        assertEquals("register", over.workload());
        assertEquals("gap-over-max", over.type());
        assertTrue(over.detail().contains("waited 900 ms for a successful write, over --max-gap 600 ms, after kill at 20.01 s"),
                over.detail());
        assertEquals(3, over.ops().size(), "the fault, the operation that waited, the success that ended the wait");
        assertEquals(1, JSON.valueToTree(a.json(Duration.ofMillis(600))).path("over_max").asInt());

        CheckResult passed = a.check(Duration.ofMillis(900));
        assertEquals(Validity.VALID, passed.validity(), "a gap as long as the limit passes");
        assertTrue(passed.notes().get(0).contains("the worst 900 ms"), passed.notes().toString());
    }

    @Test
    void workloadsThatAbandonTransactionsOnPurposeAreReportedApartAndNotHeldToMaxGap() {
        steadyPuts("register", 0, 9_000);
        op("bank", "transfer", 500, 600, OpType.OK, "{}", "{\"applied\":true}");
        kill(1_000, 1_050);
        op("bank", "transfer", 1_100, 5_100, OpType.OK, "{}", "{\"applied\":true}"); // waited out an abandoned intent
        heal(NemesisLoop.PROCESS, 1_500, 1_600);

        Availability a = Availability.of(history(), Set.of("bank"));
        assertEquals(4_000, gap(a, 0, "bank", Of.WRITE).millis());
        assertEquals("register", a.worst().workload());
        assertEquals(List.of(), a.over(Duration.ofSeconds(1)));
        assertEquals(Validity.VALID, a.check(Duration.ofSeconds(1)).validity());
        JsonNode gaps = JSON.valueToTree(a.json(Duration.ofSeconds(1)));
        assertTrue(gaps.path("by_workload").path("bank").path("apart").asBoolean(), gaps.toString());
        assertEquals(5, gaps.path("by_fault").path("kill").path("write_ms").path("worst").asLong(), "bank left out: " + gaps);
        assertTrue(String.join("\n", a.report(null)).contains("bank *"));
    }

    @Test
    void bankAndAppendAreApartOnlyWhileTheyAbandonTransactionsAcrossGroups() {
        assertEquals(Set.of("bank", "append"), Availability.apart(List.of("register", "bank", "append"), settings(4, 0.005)));
        assertEquals(Set.of(), Availability.apart(List.of("register", "bank", "append"), settings(4, 0)));
        assertEquals(Set.of(), Availability.apart(List.of("register", "bank", "append"), settings(1, 0.005)));
    }

    private static RunSettings settings(int groups, double abandon) {
        return new RunSettings(3, Duration.ofSeconds(1), NemesisKind.KILL_LEADER, "all", 1, 1, 1, java.nio.file.Path.of("unused"),
                java.nio.file.Path.of("unused"), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1),
                Duration.ofSeconds(1), 1000, List.of(), TestMode.NONE, false, false, Duration.ZERO, groups, abandon, 0, null, Duration.ZERO, Duration.ofSeconds(5));
    }
}
