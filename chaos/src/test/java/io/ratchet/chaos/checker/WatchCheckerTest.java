package io.ratchet.chaos.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.Script;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Hand-written watch histories: writers put numbers on one key while watchers wait for them. */
class WatchCheckerTest {
    private static final String KEY = "watch/k0";

    private final Script s = new Script(WatchChecker.WORKLOAD);

    private Op put(String process, long at, long value) {
        return s.invoke(process, "put", KEY, "{\"index\":" + at + ",\"value\":" + value + "}");
    }

    private void written(Op put, long index, long value) {
        s.ok(put, "{\"successful\":true,\"index\":" + index + ",\"value\":" + value + "}");
    }

    private Op watch(String process, long after, long timeoutMillis) {
        return s.invoke(process, "watch", KEY, "{\"after\":" + after + ",\"timeoutMillis\":" + timeoutMillis + "}");
    }

    /** The answer with the item at {@code lastChange} holding {@code value}. */
    private void answered(Op watch, boolean changed, long lastChange, long value) {
        s.ok(watch, "{\"changed\":" + changed + ",\"lastChange\":" + lastChange + ",\"index\":" + lastChange
                + ",\"value\":" + value + "}");
    }

    /** The answer for a key that is absent. */
    private void answeredAbsent(Op watch, boolean changed, long lastChange) {
        s.ok(watch, "{\"changed\":" + changed + ",\"lastChange\":" + lastChange + ",\"index\":0}");
    }

    private CheckResult check() {
        return new WatchChecker().check(s.ops());
    }

    private static List<String> types(CheckResult r) {
        return r.anomalies().stream().map(Anomaly::type).toList();
    }

    @Test
    void watchersThatSeeEveryChangeInTimeAreValid() {
        written(put("1", 0, 1), 5, 1);
        answered(watch("2", 0, 2000), true, 5, 1);          // the put at 5 completed before: answered at once
        Op waiting = watch("2", 5, 3000);                  // waits, and sees the put that lands during it
        Op racing = watch("3", 5, 1000);                   // its window overlaps that put, but it may time out first
        Op second = put("1", 5, 2);
        s.at(1500);
        answered(racing, false, 5, 1);
        written(second, 9, 2);
        answered(waiting, true, 9, 2);
        s.ok(put("4", 5, 3), "{\"successful\":false,\"index\":9,\"value\":2}"); // a failed condition reports 9
        s.info(put("4", 9, 4));                            // no answer: it may have been applied, at 12
        answered(watch("5", 9, 4000), true, 12, 4);
        Op unavailable = watch("6", 12, 1000);
        s.at(2000);
        s.fail(unavailable);                               // ClusterUnavailableException within its time
        watch("7", 12, 1000);                              // the run ended first: ignored
        s.ok(s.invoke("final", "read", KEY, "{}"), "{\"index\":12,\"value\":4}");
        CheckResult r = check();
        assertEquals(Validity.VALID, r.validity(), r.toString());
        assertEquals(List.of(), r.anomalies());
        assertTrue(r.notes().get(0).startsWith("6 watches on 1 keys: 3 saw a change, 1 timed out, 1 failed, 1 never completed"),
                r.notes().toString());
    }

    @Test
    void anUnchangedAnswerOlderThanAChangeAlreadySeenIsStale() {
        written(put("1", 0, 1), 5, 1);
        answeredAbsent(watch("2", 7, 1000), false, 0);      // after 7 (a stale guess): unchanged is right, lastChange 0 is not
        assertEquals(List.of("stale-answer"), types(check()));
    }

    @Test
    void aWatchSentAfterAnAcknowledgedPutThatAnswersUnchangedMissedIt() {
        written(put("1", 0, 1), 5, 1);
        Op late = watch("2", 0, 1000);
        answeredAbsent(late, false, 0);
        CheckResult r = check();
        assertEquals(Validity.INVALID, r.validity());
        assertEquals(List.of("missed-change"), types(r), r.toString());
        Anomaly a = r.anomalies().get(0);
        assertEquals(KEY, a.key());
        assertEquals(List.of(1L, 2L, 3L), a.ops(), "names the put's completion and the watch");
    }

    @Test
    void aWatchThatReportsAnOlderChangeThanOneAlreadyAcknowledgedMissedIt() {
        written(put("1", 0, 1), 5, 1);
        written(put("1", 5, 2), 8, 2);
        Op watch = watch("2", 3, 1000);
        answered(watch, true, 5, 1);
        assertEquals(List.of("missed-change"), types(check()));
    }

    @Test
    void aChangeSeenByAnEarlierWatchCountsToo() {
        Op writer = put("1", 0, 1);
        answered(watch("2", 0, 3000), true, 5, 1);           // sees the put before the put's own answer
        Op late = watch("3", 0, 1000);
        answeredAbsent(late, false, 0);
        written(writer, 5, 1);
        CheckResult r = check();
        assertEquals(List.of("missed-change"), types(r));
        assertEquals(List.of(2L, 3L, 4L), r.anomalies().get(0).ops(), "names the earlier watch's answer");
    }

    @Test
    void aChangeInsideTheWindowButNotBeforeItMayBeMissedByATimeout() {
        Op watch = watch("2", 0, 1000);
        Op writer = put("1", 0, 1);
        s.at(1200);
        answeredAbsent(watch, false, 0);         // the put may have been applied after the watch timed out
        written(writer, 5, 1);
        assertEquals(Validity.VALID, check().validity());
    }

    @Test
    void answersThatContradictThemselvesAreInvalid() {
        answeredAbsent(watch("1", 5, 1000), true, 3);   // changed, but not after 5
        answeredAbsent(watch("2", 5, 1000), false, 9);  // unchanged, but changed at 9
        CheckResult r = check();
        assertEquals(Validity.INVALID, r.validity());
        assertEquals(List.of("invalid-answer", "invalid-answer"), types(r), r.toString());
    }

    @Test
    void anItemWhoseIndexIsNotTheLastChangeIsAnInvalidAnswer() {
        written(put("1", 0, 1), 5, 1);
        Op watch = watch("2", 0, 1000);
        s.ok(watch, "{\"changed\":true,\"lastChange\":6,\"index\":5,\"value\":1}");
        assertEquals(List.of("invalid-answer"), types(check()));
    }

    @Test
    void aValueNoPutWroteIsAPhantom() {
        written(put("1", 0, 1), 5, 1);
        Op watch = watch("2", 0, 1000);
        answered(watch, true, 5, 77);
        assertEquals(List.of("phantom-value"), types(check()));
    }

    @Test
    void aWatchThatOverranItsTimeoutIsFlaggedAnsweredOrNot() {
        s.at(0);
        Op failed = watch("1", 0, 1000);
        Op answered = watch("2", 0, 2000);
        Op inTime = watch("3", 0, 1000);
        s.at(3998);
        s.fail(inTime);                          // 3999 ms: within 1000 + 1000 slack + 2000 tolerance
        s.at(4500);
        s.fail(failed);                          // 4501 ms: over
        s.at(6000);
        answeredAbsent(answered, false, 0);      // 6001 ms: over
        CheckResult r = check();
        assertEquals(Validity.INVALID, r.validity());
        assertEquals(List.of("overran", "overran"), types(r), r.toString());
        assertEquals(List.of(0L, 4L), r.anomalies().get(0).ops());
        assertEquals(List.of(1L, 5L), r.anomalies().get(1).ops());
    }
}
