package io.ratchet.chaos.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.Script;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Hand-written fair-lock histories: waiters queue for the printer at a place each ({@code queued}, with the
 * entry's key {@code entry} ordering a shared place); a grant's token is its turn write's index, above its
 * place. Checked by {@link LockChecker#fair()}: first come, first served among waiters whose places were
 * live, on top of every check of a lock.
 */
class FairLockCheckerTest {
    private static final String QUEUE = "fair-locks/printer/";
    private static final String PRINTER = "fenced/printer";

    private final Script s = new Script(LockChecker.FAIR_WORKLOAD);

    private Op acquire(String process, String owner, long waitMillis) {
        return s.invoke(process, "acquire", QUEUE, "{\"owner\":\"" + owner + "\",\"lease_ms\":6000,\"wait_ms\":" + waitMillis + "}");
    }

    /** Granted at its turn: queued at {@code place} (entry key "k" + place), token {@code place + 100}. */
    private void granted(Op acquire, long place) {
        granted(acquire, place, "k" + place, place + 100);
    }

    private void granted(Op acquire, long place, String entry, long token) {
        s.ok(acquire, "{\"granted\":true,\"queued\":" + place + ",\"entry\":\"" + entry + "\",\"token\":" + token + "}");
    }

    /** The wait ran out; the waiter held its place, live, until it gave up. */
    private void gaveUp(Op acquire, long place) {
        gaveUp(acquire, place, "k" + place);
    }

    private void gaveUp(Op acquire, long place, String entry) {
        s.ok(acquire, "{\"granted\":false,\"queued\":" + place + ",\"entry\":\"" + entry + "\"}");
    }

    private void release(String process, String owner, long token) {
        s.call(process, "release", QUEUE, "{\"owner\":\"" + owner + "\",\"token\":" + token + "}", "{\"released\":true}");
    }

    private List<String> anomalies() {
        CheckResult r = LockChecker.fair().check(s.ops());
        r.anomalies().forEach(a -> assertEquals(LockChecker.FAIR_WORKLOAD, a.workload()));
        return r.anomalies().stream().map(Anomaly::type).toList();
    }

    @Test
    void waitersServedInTurnAndOneThatGaveUpFirstAreValid() {
        s.at(0);
        Op first = acquire("1", "o1", 1000);
        granted(first, 5);
        Op second = acquire("2", "o2", 1000);
        Op third = acquire("3", "o3", 100);   // queued at 9, behind o2 (7)
        Op fourth = acquire("4", "o4", 1000); // queued at 11
        s.at(50);
        s.call("1", "write", PRINTER, "{\"owner\":\"o1\",\"token\":105}", "{\"accepted\":true,\"index\":6}");
        release("1", "o1", 5);
        granted(second, 7);
        s.at(200);
        gaveUp(third, 9); // its wait (100 ms) was over
        release("2", "o2", 7);
        s.at(300);
        granted(fourth, 11); // after o3 gave up: no one live was skipped
        release("4", "o4", 11);
        s.call("final", "read", PRINTER, "{}", "{\"token\":105,\"index\":6}");

        CheckResult r = LockChecker.fair().check(s.ops());
        assertEquals(Validity.VALID, r.validity(), r.toString());
    }

    @Test
    void aGrantPastALiveWaiterAheadIsAFifoViolation() {
        s.at(0);
        granted(acquire("1", "o1", 1000), 5);
        Op waiting = acquire("2", "o2", 2000); // place 7, waits up to 2 s
        Op jumper = acquire("3", "o3", 2000);  // place 9
        s.at(40);
        release("1", "o1", 5);
        granted(jumper, 9);                    // served while o2, ahead of it, still waited
        release("3", "o3", 9);
        s.at(2010);
        gaveUp(waiting, 7);

        assertEquals(List.of("fifo-violated"), anomalies());
    }

    @Test
    void aWaiterThatLostItsPlaceOrWhoseAcquireHadNoAnswerMayBePassed() {
        s.at(0);
        granted(acquire("1", "o1", 1000), 5);
        Op lost = acquire("2", "o2", 2000);
        Op unknown = acquire("3", "o3", 2000);
        Op next = acquire("4", "o4", 2000);
        s.at(40);
        release("1", "o1", 5);
        granted(next, 11);
        release("4", "o4", 11);
        s.at(2010);
        s.ok(lost, "{\"granted\":false,\"queued\":7,\"entry\":\"k7\",\"lost\":true}"); // ran out: not live, rightly skipped
        s.info(unknown);

        assertEquals(List.of(), anomalies());
    }

    @Test
    void aWaiterServedAfterOneBehindItIsCaughtByItsToken() {
        s.at(0);
        granted(acquire("1", "o1", 1000), 5);
        Op ahead = acquire("2", "o2", 2000);
        Op behind = acquire("3", "o3", 2000);
        s.at(40);
        release("1", "o1", 5);
        granted(behind, 9);
        release("3", "o3", 9);
        granted(ahead, 7);
        release("2", "o2", 7);

        assertEquals(List.of("token-not-increasing"), anomalies());
    }

    @Test
    void aHolderReadAfterAnUnansweredAcquireCountsAsAGrantForFifoToo() {
        s.at(0);
        granted(acquire("1", "o1", 1000), 5);
        Op waiting = acquire("2", "o2", 2000); // place 7
        s.info(acquire("3", "o3", 2000));      // place 9, answer lost
        s.at(40);
        release("1", "o1", 5);
        s.call("4", "holder", QUEUE, "{\"owner\":\"o3\"}",
                "{\"holder\":\"o3\",\"token\":109,\"queued\":9,\"entry\":\"k9\",\"length\":2}");
        release("4", "o3", 9);
        s.at(2010);
        gaveUp(waiting, 7);

        assertEquals(List.of("fifo-violated"), anomalies());
    }

    /** Joins carried by one log entry share a place; the queue orders them by key, and so must every grant. */
    @Test
    void aSharedPlaceIsOrderedByKey() {
        s.at(0);
        granted(acquire("1", "o1", 1000), 5);
        Op low = acquire("2", "o2", 2000);  // place 7, key "a..."
        Op high = acquire("3", "o3", 2000); // place 7, key "b...": behind o2
        s.at(40);
        release("1", "o1", 105);
        granted(low, 7, "a0", 110);
        release("2", "o2", 110);
        granted(high, 7, "b0", 112);
        release("3", "o3", 112);
        assertEquals(List.of(), anomalies(), "served in key order");

        Op ahead = acquire("4", "o4", 2000);  // place 20, key "a1"
        Op behind = acquire("5", "o5", 2000); // place 20, key "b1"
        s.at(100);
        granted(behind, 20, "b1", 130);
        release("5", "o5", 130);
        s.at(2200);
        gaveUp(ahead, 20, "a1");
        assertEquals(List.of("fifo-violated"), anomalies(), "b1 was served while a1, ahead of it at the same place, waited");
    }

    @Test
    void theChecksOfALockStillHold() {
        granted(acquire("1", "o1", 1000), 5);
        granted(acquire("2", "o2", 1000), 9);
        release("1", "o1", 5);
        release("2", "o2", 9);
        assertEquals(List.of("overlapping-holders"), anomalies());
    }
}
