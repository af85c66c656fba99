package io.ratchet.chaos.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.ratchet.chaos.checker.LinearizabilityChecker.Entry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The search itself, on a toy model: a counter that operations add to and reads report. */
class LinearizabilityCheckerTest {

    /** Add {@code amount}, or (when {@code read}) report the counter as {@code amount}. */
    record CounterOp(boolean read, long amount) {
    }

    static final LinearizabilityChecker.Model<Long, CounterOp> COUNTER = new LinearizabilityChecker.Model<>() {
        @Override
        public Long initial() {
            return 0L;
        }

        @Override
        public Optional<Long> step(Long state, CounterOp op) {
            if (op.read()) {
                return state == op.amount() ? Optional.of(state) : Optional.empty();
            }
            return Optional.of(state + op.amount());
        }
    };

    private final LinearizabilityChecker<Long, CounterOp> checker = new LinearizabilityChecker<>(COUNTER);

    private Validity check(List<Entry<CounterOp>> entries) {
        return checker.check(Map.of("counter", entries), Duration.ofSeconds(10)).get("counter").validity();
    }

    @Test
    void aReadConcurrentWithAnAddMaySeeEitherSide() {
        Entry<CounterOp> add = new Entry<>(new CounterOp(false, 5), 0, 3);
        assertEquals(Validity.VALID, check(List.of(add, new Entry<>(new CounterOp(true, 0), 1, 2))));
        assertEquals(Validity.VALID, check(List.of(add, new Entry<>(new CounterOp(true, 5), 1, 2))));
    }

    @Test
    void aReadAfterAnAddReturnedMustSeeIt() {
        Entry<CounterOp> add = new Entry<>(new CounterOp(false, 5), 0, 1);
        assertEquals(Validity.INVALID, check(List.of(add, new Entry<>(new CounterOp(true, 0), 2, 3))));
    }

    @Test
    void anAddWithUnknownOutcomeMayHaveHappenedOrNot() {
        Entry<CounterOp> lost = new Entry<>(new CounterOp(false, 5), 0, Long.MAX_VALUE);
        assertEquals(Validity.VALID, check(List.of(lost, new Entry<>(new CounterOp(true, 0), 2, 3))));
        assertEquals(Validity.VALID, check(List.of(lost, new Entry<>(new CounterOp(true, 5), 2, 3))));
        assertEquals(Validity.INVALID, check(List.of(lost, new Entry<>(new CounterOp(true, 7), 2, 3))));
    }

    @Test
    void theVerdictNamesWhereTheSearchGotStuck() {
        List<Entry<CounterOp>> entries = List.of(
                new Entry<>(new CounterOp(false, 1), 0, 1),
                new Entry<>(new CounterOp(true, 1), 2, 3),
                new Entry<>(new CounterOp(true, 9), 4, 5));
        LinearizabilityChecker.Verdict<Long, CounterOp> v = checker.check(entries, System.nanoTime() + 10_000_000_000L);
        assertEquals(Validity.INVALID, v.validity());
        assertEquals(new CounterOp(true, 9), v.stuckAt());
        assertEquals(1L, v.stateThere());
        assertEquals(2, v.linearizedBefore());
    }

    /**
     * Twenty concurrent adds of distinct powers of two and a read no subset sums to: 2^20 states to rule
     * out before saying invalid.
     */
    private static List<Entry<CounterOp>> twentyAddsAndAnImpossibleRead() {
        List<Entry<CounterOp>> entries = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            entries.add(new Entry<>(new CounterOp(false, 1L << i), i, 100));
        }
        entries.add(new Entry<>(new CounterOp(true, -1), 50, 60));
        return entries;
    }

    @Test
    void aSearchThatWouldTakeTooLongSaysUnknownInsteadOfHanging() {
        // With no budget at all, the hard search must give up at once; an easy one still gets its answer.
        List<Entry<CounterOp>> entries = twentyAddsAndAnImpossibleRead();
        Map<String, LinearizabilityChecker.Verdict<Long, CounterOp>> verdicts = assertTimeoutPreemptively(
                Duration.ofSeconds(10), () -> checker.check(Map.of("counter", entries, "easy",
                        List.of(new Entry<>(new CounterOp(false, 1), 0, 1))), Duration.ZERO));
        assertEquals(Validity.UNKNOWN, verdicts.get("counter").validity());
        assertEquals(Validity.VALID, verdicts.get("easy").validity());
    }

    @Test
    void aSearchThatWouldRememberTooManyStatesSaysUnknown() {
        List<Entry<CounterOp>> entries = twentyAddsAndAnImpossibleRead();
        LinearizabilityChecker<Long, CounterOp> small = new LinearizabilityChecker<>(COUNTER, 1000);
        assertEquals(Validity.UNKNOWN, small.check(entries, System.nanoTime() + 60_000_000_000L).validity());
        assertEquals(Validity.INVALID, small.check(entries.subList(12, 21), System.nanoTime() + 60_000_000_000L).validity(),
                "the same kind of history, small enough for the budget, is decided");
    }

    @Test
    void eachObjectIsJudgedOnItsOwn() {
        Map<String, List<Entry<CounterOp>>> objects = Map.of(
                "good", List.of(new Entry<>(new CounterOp(false, 2), 0, 1), new Entry<>(new CounterOp(true, 2), 2, 3)),
                "bad", List.of(new Entry<>(new CounterOp(false, 2), 0, 1), new Entry<>(new CounterOp(true, 3), 2, 3)));
        var verdicts = checker.check(objects, Duration.ofSeconds(10));
        assertEquals(Validity.VALID, verdicts.get("good").validity());
        assertEquals(Validity.INVALID, verdicts.get("bad").validity());
    }
}
