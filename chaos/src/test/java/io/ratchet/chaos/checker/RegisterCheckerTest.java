package io.ratchet.chaos.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.Script;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Hand-written register histories that must pass, and ones that must fail. */
class RegisterCheckerTest {
    private static final String K = "register/k0";

    private final Script s = new Script(RegisterChecker.WORKLOAD);

    private CheckResult check() {
        return new RegisterChecker(Duration.ofSeconds(10)).check(s.ops());
    }

    private Op put(String process, long expected, long value) {
        return s.invoke(process, "put", K, "{\"index\":" + expected + ",\"value\":" + value + "}");
    }

    private void applied(Op put, long index, long value) {
        s.ok(put, "{\"successful\":true,\"index\":" + index + ",\"value\":" + value + "}");
    }

    private void refused(Op write, long index, Long value) {
        s.ok(write, "{\"successful\":false,\"index\":" + index + (value == null ? "" : ",\"value\":" + value) + "}");
    }

    private Op read(String process) {
        return s.invoke(process, "read", K, "{}");
    }

    private void saw(Op read, long index, Long value) {
        s.ok(read, "{\"index\":" + index + (value == null ? "" : ",\"value\":" + value) + "}");
    }

    @Test
    void createUpdateDeleteInSequenceIsLinearizable() {
        applied(put("1", 0, 10), 5, 10);
        saw(read("2"), 5, 10L);
        applied(put("1", 5, 11), 7, 11);
        refused(put("2", 5, 12), 7, 11L);
        Op delete = s.invoke("2", "delete", K, "{\"index\":7}");
        s.ok(delete, "{\"successful\":true,\"index\":0}");
        saw(read("1"), 0, null);
        applied(put("1", 0, 13), 9, 13);
        CheckResult r = check();
        assertEquals(Validity.VALID, r.validity(), r.toString());
    }

    @Test
    void concurrentConditionalPutsFromOneIndexLetOnlyOneWin() {
        applied(put("1", 0, 10), 5, 10);
        Op a = put("1", 5, 11);
        Op b = put("2", 5, 12);
        Op r = read("3");
        applied(b, 8, 12);
        refused(a, 8, 12L);
        saw(r, 5, 10L);
        assertEquals(Validity.VALID, check().validity());
    }

    @Test
    void aLostUpdateIsFlagged() {
        // Both writers condition on index 5; the second acts after the first was acknowledged, yet
        // succeeds too: the first update is lost. This is what a client that ignores conditions does.
        applied(put("1", 0, 10), 5, 10);
        applied(put("1", 5, 11), 7, 11);
        applied(put("2", 5, 12), 9, 12);
        CheckResult r = check();
        assertEquals(Validity.INVALID, r.validity());
        assertEquals("not-linearizable", r.anomalies().get(0).type());
        assertEquals(K, r.anomalies().get(0).key());
        assertTrue(r.anomalies().get(0).detail().contains("12"), r.anomalies().get(0).detail());
    }

    @Test
    void aStaleReadIsFlagged() {
        applied(put("1", 0, 10), 5, 10);
        applied(put("1", 5, 11), 7, 11);
        saw(read("2"), 5, 10L);
        CheckResult r = check();
        assertEquals(Validity.INVALID, r.validity());
        assertEquals("not-linearizable", r.anomalies().get(0).type());
    }

    @Test
    void aWriteWithoutAnAnswerMayHaveHappened() {
        applied(put("1", 0, 10), 5, 10);
        s.info(put("1", 5, 11));
        saw(read("2"), 6, 11L);
        applied(put("2", 6, 12), 8, 12);
        assertEquals(Validity.VALID, check().validity());
    }

    @Test
    void aWriteWithoutAnAnswerMayNotHaveHappened() {
        applied(put("1", 0, 10), 5, 10);
        s.info(put("1", 5, 11));
        saw(read("2"), 5, 10L);
        applied(put("2", 5, 12), 8, 12);
        assertEquals(Validity.VALID, check().validity());
    }

    @Test
    void aWriteWithoutAnAnswerCannotTakeEffectTwice() {
        applied(put("1", 0, 10), 5, 10);
        s.info(put("1", 5, 11));
        saw(read("2"), 6, 11L);
        saw(read("2"), 5, 10L);
        CheckResult r = check();
        assertEquals(Validity.INVALID, r.validity(), "a value that went back to an older one");
    }

    @Test
    void aCreateRefusedOnAnAbsentItemIsFlagged() {
        refused(put("1", 0, 10), 0, null);
        assertEquals(Validity.INVALID, check().validity());
    }

    @Test
    void aRefusalMustReportTheItemAsItIs() {
        applied(put("1", 0, 10), 5, 10);
        refused(put("2", 3, 11), 4, 10L);
        assertEquals(Validity.INVALID, check().validity());
    }

    @Test
    void anIndexMustNeverMoveBackwards() {
        applied(put("1", 0, 10), 5, 10);
        applied(put("1", 5, 11), 4, 11);
        assertEquals(Validity.INVALID, check().validity());
    }

    @Test
    void oneValueSeenAtTwoIndexesIsFlagged() {
        applied(put("1", 0, 10), 5, 10);
        Op r = read("2");
        saw(r, 6, 10L);
        CheckResult result = check();
        assertEquals(Validity.INVALID, result.validity());
        assertTrue(result.anomalies().stream().anyMatch(a -> a.type().equals("value-at-two-indexes")), result.toString());
    }

    @Test
    void keysAreCheckedIndependently() {
        applied(put("1", 0, 10), 5, 10);
        Op other = s.invoke("2", "put", "register/k1", "{\"index\":0,\"value\":20}");
        s.ok(other, "{\"successful\":true,\"index\":6,\"value\":20}");
        Op read = s.invoke("3", "read", "register/k1", "{}");
        s.ok(read, "{\"index\":6,\"value\":20}");
        CheckResult r = check();
        assertEquals(Validity.VALID, r.validity(), r.toString());
        assertTrue(r.notes().get(0).startsWith("2 keys"), r.notes().get(0));
    }
}
