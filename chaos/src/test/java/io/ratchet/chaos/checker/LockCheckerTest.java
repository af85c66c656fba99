package io.ratchet.chaos.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.Script;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Hand-written lock histories: holders of the printer lock, writing to the printer under their tokens. */
class LockCheckerTest {
    private static final String LOCK = "chaos-locks/printer";
    private static final String PRINTER = "fenced/printer";

    private final Script s = new Script(LockChecker.WORKLOAD);

    private Op acquire(String process, String owner) {
        return s.invoke(process, "acquire", LOCK, "{\"owner\":\"" + owner + "\"}");
    }

    private void granted(Op acquire, long token) {
        s.ok(acquire, "{\"granted\":true,\"token\":" + token + "}");
    }

    private void release(String process, String owner, long token) {
        s.call(process, "release", LOCK, "{\"owner\":\"" + owner + "\",\"token\":" + token + "}", "{\"released\":true}");
    }

    private void write(String process, String owner, long token, long resourceIndex) {
        s.call(process, "write", PRINTER, "{\"owner\":\"" + owner + "\",\"token\":" + token + "}",
                "{\"accepted\":true,\"index\":" + resourceIndex + "}");
    }

    private List<String> anomalies() {
        return new LockChecker().check(s.ops()).anomalies().stream().map(Anomaly::type).toList();
    }

    @Test
    void holdersOneAfterAnotherWithRisingTokensAreValid() {
        granted(acquire("1", "o1"), 5);
        write("1", "o1", 5, 6);
        release("1", "o1", 5);
        granted(acquire("2", "o2"), 9);
        write("2", "o2", 9, 10);
        release("2", "o2", 9);
        s.call("final", "read", PRINTER, "{}", "{\"token\":9,\"index\":10}");
        CheckResult r = new LockChecker().check(s.ops());
        assertEquals(Validity.VALID, r.validity(), r.toString());
    }

    @Test
    void overlappingHoldersAreFlagged() {
        granted(acquire("1", "o1"), 5);
        granted(acquire("2", "o2"), 9);
        release("1", "o1", 5);
        release("2", "o2", 9);
        assertEquals(List.of("overlapping-holders"), anomalies());
    }

    @Test
    void aTokenLowerThanTheLastHoldersIsFlagged() {
        granted(acquire("1", "o1"), 9);
        release("1", "o1", 9);
        granted(acquire("2", "o2"), 5);
        release("2", "o2", 5);
        assertEquals(List.of("token-not-increasing"), anomalies());
    }

    @Test
    void aResourceAcceptingAStaleTokenIsFlagged() {
        write("1", "o2", 9, 10);
        write("2", "o1", 5, 12);
        assertEquals(List.of("stale-token-accepted"), anomalies());
    }

    @Test
    void aHolderThatLearnsOfItsGrantByReadingHoldsFromThatRead() {
        s.info(acquire("1", "o1"));
        s.call("2", "holder", LOCK, "{\"owner\":\"o1\"}", "{\"holder\":\"o1\",\"token\":5}");
        release("2", "o1", 5);
        granted(acquire("3", "o2"), 9);
        release("3", "o2", 9);
        assertEquals(List.of(), anomalies());

        granted(acquire("4", "o3"), 12);
        s.info(acquire("5", "o4"));
        s.call("6", "holder", LOCK, "{\"owner\":\"o4\"}", "{\"holder\":\"o4\",\"token\":14}");
        release("4", "o3", 12);
        assertEquals(List.of("overlapping-holders"), anomalies());
    }

    @Test
    void aLeaseEndsTheWindowEvenWithoutARelease() {
        s.at(0);
        Op first = s.invoke("1", "acquire", LOCK, "{\"owner\":\"o1\",\"lease_ms\":100}");
        granted(first, 5);
        s.at(250);
        granted(acquire("2", "o2"), 9);
        assertEquals(List.of(), anomalies(), "o1's lease ran out at 100 ms");

        s.at(260);
        Op third = s.invoke("3", "acquire", LOCK, "{\"owner\":\"o3\",\"lease_ms\":100}");
        granted(third, 12);
        assertEquals(List.of("overlapping-holders"), anomalies(), "o2 holds without a lease until it releases");
    }

    @Test
    void aGrantAnsweredAfterItsLeaseRanOutIsFlaggedAndNotCountedAsAHold() {
        s.at(0);
        Op late = s.invoke("1", "acquire", LOCK, "{\"owner\":\"o1\",\"lease_ms\":100}");
        s.at(120);
        granted(acquire("2", "o2"), 9);
        s.at(400);
        granted(late, 5);
        release("1", "o1", 5);
        release("2", "o2", 9);
        assertEquals(List.of("grant-after-lease"), anomalies(), "neither an overlap nor a falling token: o1 never held it");
    }

    @Test
    void aReadThatFindsAGrantOnlyAfterItsLeaseRanOutIsNoHold() {
        s.at(0);
        s.info(s.invoke("1", "acquire", LOCK, "{\"owner\":\"o1\",\"lease_ms\":100}"));
        s.at(120);
        granted(acquire("2", "o2"), 9);
        s.at(400);
        s.call("1", "holder", LOCK, "{\"owner\":\"o1\"}", "{\"holder\":\"o1\",\"token\":5}");
        release("1", "o1", 5);
        release("2", "o2", 9);
        assertEquals(List.of(), anomalies(), "the workload gives such a grant back without acting on it");
    }
}
