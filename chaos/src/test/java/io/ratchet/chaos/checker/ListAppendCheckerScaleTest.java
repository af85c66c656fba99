package io.ratchet.chaos.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.chaos.history.Op;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The checker's cost grows with the history, not with its square: 50,000 transactions of ten processes
 * are checked within the default check budget ({@code --check-budget 60s}), valid as generated and with
 * stale reads mixed in, where the cycle search has work to do.
 */
class ListAppendCheckerScaleTest {
    private static final Duration BUDGET = Duration.ofSeconds(60);

    private static CheckResult timed(String what, List<Op> history) {
        long start = System.nanoTime();
        CheckResult r = new ListAppendChecker(BUDGET).check(history);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        System.out.println("ListAppendChecker: " + what + ": " + history.size() + " history lines checked in "
                + took.toMillis() + " ms; " + r.notes().get(0));
        assertTrue(took.compareTo(BUDGET) < 0, what + " took " + took);
        return r;
    }

    @Test
    void fiftyThousandStrictlySerializableTransactionsAreValidWithinTheBudget() {
        CheckResult r = timed("valid", GeneratedAppendHistory.of(50_000, 42, 0));
        assertEquals(Validity.VALID, r.validity(), r.notes().toString());
        assertEquals(ListAppendChecker.STRICT, r.details().get("model"));
        assertEquals(50_000, r.details().get("transactions"));
    }

    @Test
    void fiftyThousandTransactionsWithStaleReadsAreCaughtWithinTheBudget() {
        CheckResult r = timed("stale reads", GeneratedAppendHistory.of(50_000, 43, 0.05));
        assertEquals(Validity.INVALID, r.validity(), r.notes().toString());
        assertTrue(r.anomalies().stream().anyMatch(a -> a.type().startsWith("G-single") || a.type().startsWith("G2")),
                r.anomalies().toString());
    }
}
