package io.ratchet.chaos.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.Script;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Hand-written reservation histories: two sign-ups race for one address. */
class ReservationCheckerTest {
    private static final String EMAIL = "reservations/ada@example.com";

    private final Script s = new Script(ReservationChecker.WORKLOAD);

    private Op reserve(String process, String owner) {
        return s.invoke(process, "reserve", EMAIL, "{\"owner\":\"" + owner + "\"}");
    }

    private void granted(Op attempt, String owner, long index) {
        s.ok(attempt, "{\"successful\":true,\"index\":" + index + ",\"value\":\"" + owner + "\"}");
    }

    private void refused(Op attempt, String holder, long index) {
        s.ok(attempt, "{\"successful\":false,\"index\":" + index + ",\"value\":\"" + holder + "\"}");
    }

    /** The final read: one page listing these owners of {@link #EMAIL} (or nothing). */
    private void finalRead(String... ownerAndIndex) {
        Op list = s.invoke("final", "list", "reservations/", "{\"start\":0,\"page_size\":1024}");
        StringBuilder items = new StringBuilder();
        for (int i = 0; i < ownerAndIndex.length; i += 2) {
            items.append(items.length() == 0 ? "" : ",").append("{\"key\":\"").append(EMAIL).append("\",\"value\":\"")
                    .append(ownerAndIndex[i]).append("\",\"index\":").append(ownerAndIndex[i + 1]).append('}');
        }
        s.ok(list, "{\"items\":[" + items + "]}");
    }

    private CheckResult check() {
        return new ReservationChecker().check(s.ops());
    }

    private static List<String> types(CheckResult r) {
        return r.anomalies().stream().map(Anomaly::type).toList();
    }

    @Test
    void oneWinnerAndARefusalThatNamesItIsValid() {
        Op ada = reserve("1", "o1");
        Op eve = reserve("2", "o2");
        granted(ada, "o1", 5);
        refused(eve, "o1", 5);
        finalRead("o1", "5");
        CheckResult r = check();
        assertEquals(Validity.VALID, r.validity(), r.toString());
    }

    @Test
    void aDoubleReservationIsFlagged() {
        granted(reserve("1", "o1"), "o1", 5);
        granted(reserve("2", "o2"), "o2", 7);
        finalRead("o2", "7");
        CheckResult r = check();
        assertEquals(Validity.INVALID, r.validity());
        assertEquals("double-reservation", types(r).get(0));
    }

    @Test
    void anAcknowledgedReservationMissingAtTheEndIsFlagged() {
        granted(reserve("1", "o1"), "o1", 5);
        finalRead();
        assertEquals(List.of("lost-reservation"), types(check()));
    }

    @Test
    void aReservationWithoutAnAnswerMayHaveWon() {
        s.info(reserve("1", "o1"));
        refused(reserve("2", "o2"), "o1", 5);
        finalRead("o1", "5");
        assertEquals(Validity.VALID, check().validity());
    }

    @Test
    void anOwnerThatNeverWonIsAPhantom() {
        Op loser = reserve("1", "o1");
        refused(loser, "o9", 5);
        finalRead("o9", "5");
        assertEquals(List.of("phantom-reservation"), types(check()));
    }

    @Test
    void aRefusalNamingSomeoneElseIsFlagged() {
        granted(reserve("1", "o1"), "o1", 5);
        refused(reserve("2", "o2"), "o3", 6);
        finalRead("o1", "5");
        assertEquals(List.of("wrong-owner-reported"), types(check()));
    }

    @Test
    void aRefusalBeforeTheWinnerAskedIsFlagged() {
        refused(reserve("2", "o2"), "o1", 5);
        granted(reserve("1", "o1"), "o1", 5);
        finalRead("o1", "5");
        assertEquals(List.of("refused-before-reserved"), types(check()));
    }

    @Test
    void withoutAFinalReadTheCheckIsUndecided() {
        granted(reserve("1", "o1"), "o1", 5);
        assertEquals(Validity.UNKNOWN, check().validity());
    }
}
