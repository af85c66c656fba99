package io.ratchet.chaos.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.Script;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Hand-written semaphore histories of two permits, checked by {@link LockChecker#semaphore()}. */
class SemaphoreCheckerTest {
    private static final String QUEUE = "semaphores/pool/";

    private final Script s = new Script(LockChecker.SEMAPHORE_WORKLOAD);

    private Op acquire(String process, String owner) {
        return s.invoke(process, "acquire", QUEUE, "{\"owner\":\"" + owner + "\",\"lease_ms\":6000,\"wait_ms\":1000,\"permits\":2}");
    }

    private void granted(Op acquire, long token) {
        s.ok(acquire, "{\"granted\":true,\"token\":" + token + ",\"queued\":" + token + "}");
    }

    private void release(String process, String owner, long token) {
        s.call(process, "release", QUEUE, "{\"owner\":\"" + owner + "\",\"token\":" + token + "}", "{\"released\":true}");
    }

    private List<String> anomalies() {
        return LockChecker.semaphore().check(s.ops()).anomalies().stream().map(Anomaly::type).toList();
    }

    @Test
    void twoHoldersAtOnceInAnyAcknowledgedOrderAreValid() {
        Op a = acquire("1", "a");
        Op b = acquire("2", "b");
        granted(b, 6); // let in together; b's answer came first
        granted(a, 5);
        release("1", "a", 5);
        granted(acquire("3", "c"), 8);
        release("2", "b", 6);
        release("3", "c", 8);
        s.call("final", "read", QUEUE + "permits", "{}", "{\"permits\":2,\"index\":4}");

        CheckResult r = LockChecker.semaphore().check(s.ops());
        assertEquals(Validity.VALID, r.validity(), r.toString());
    }

    @Test
    void aThirdHolderWhileTwoHoldIsFlagged() {
        granted(acquire("1", "a"), 5);
        granted(acquire("2", "b"), 6);
        granted(acquire("3", "c"), 8);
        release("1", "a", 5);
        release("2", "b", 6);
        release("3", "c", 8);

        assertEquals(List.of("too-many-holders"), anomalies());
    }

    @Test
    void aLeaseThatRanOutFreesItsPermit() {
        s.at(0);
        s.ok(s.invoke("1", "acquire", QUEUE, "{\"owner\":\"a\",\"lease_ms\":100,\"permits\":2}"), "{\"granted\":true,\"token\":5}");
        granted(acquire("2", "b"), 6);
        s.at(200); // a's lease ran out at 100 ms: it no longer counts
        granted(acquire("3", "c"), 8);
        release("2", "b", 6);
        release("3", "c", 8);

        assertEquals(List.of(), anomalies());
    }

    @Test
    void turnsDecidedInOneLogEntryMayShareATokenButAChangedPermitsItemIsFlagged() {
        granted(acquire("1", "a"), 5);
        granted(acquire("2", "b"), 5); // both turn writes went in one log entry
        release("1", "a", 5);
        release("2", "b", 5);
        assertEquals(List.of(), anomalies());

        s.call("final", "read", QUEUE + "permits", "{}", "{\"permits\":3,\"index\":40}");
        assertEquals(List.of("permits-changed"), anomalies());
    }
}
