package io.ratchet.chaos.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.chaos.history.Op;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Hand-written list-append histories: each anomaly class the checker names must be found, and histories
 * that some serial order explains, unknown outcomes included, must pass.
 */
class ListAppendCheckerTest {
    private final AppendScript s = new AppendScript();

    private CheckResult check() {
        return new ListAppendChecker(Duration.ofSeconds(10)).check(s.ops());
    }

    private Set<String> types() {
        Set<String> types = new TreeSet<>();
        check().anomalies().forEach(a -> types.add(a.type()));
        return types;
    }

    private void assertValid(String model) {
        CheckResult r = check();
        assertEquals(Validity.VALID, r.validity(), r.toString());
        assertEquals(model, r.details().get("model"), r.toString());
    }

    private void assertFound(String type) {
        CheckResult r = check();
        assertEquals(Validity.INVALID, r.validity(), r.toString());
        assertTrue(types().contains(type), "expected " + type + " in " + r);
    }

    // ---- histories a serial order explains

    @Test
    void transactionsOneAfterAnotherAreStrictlySerializable() {
        s.txn("1", "a x 1");
        s.txn("2", "r x 1", "a y 2");
        s.txn("3", "r y 2", "r x 1", "a x 3");
        s.finalRead("r x 1 3", "r y 2");
        assertValid(ListAppendChecker.STRICT);
        assertEquals(3, check().details().get("transactions"));
    }

    @Test
    void aReadConcurrentWithAnAppendMaySeeEitherSide() {
        Op append = s.invoke("1", "a x 1");
        s.txn("2", "r x");
        s.txn("3", "r x 1");
        s.commit(append);
        s.finalRead("r x 1");
        assertValid(ListAppendChecker.STRICT);
    }

    @Test
    void anAbortedTransactionNobodySawIsNoAnomaly() {
        s.abort(s.invoke("1", "r x", "a x 1"));
        s.fail(s.invoke("2", "a x 2"));
        s.txn("3", "a x 3");
        s.finalRead("r x 3");
        assertValid(ListAppendChecker.STRICT);
        assertEquals(2L, check().details().get("aborted"));
    }

    @Test
    void anUnknownOutcomeMayHaveTakenEffect() {
        s.info(s.invoke("1", "a x 1", "a y 2"));
        s.txn("2", "r x 1", "a x 3");
        s.finalRead("r x 1 3", "r y 2");
        assertValid(ListAppendChecker.STRICT);
        assertEquals(1, check().details().get("unknown_applied"));
    }

    @Test
    void anUnknownOutcomeMayNeverHaveTakenEffect() {
        s.info(s.invoke("1", "a x 1"));
        s.txn("2", "r x", "a x 3");
        s.finalRead("r x 3");
        assertValid(ListAppendChecker.STRICT);
        assertEquals(0, check().details().get("unknown_applied"));
    }

    @Test
    void anUnknownOutcomeSeenLateIsOrderedWhereItWasSeen() {
        // Its invocation came first; it took effect after the append of 2, which the final read shows.
        Op unknown = s.invoke("1", "a x 1");
        s.txn("2", "a x 2");
        s.info(unknown);
        s.txn("3", "r x 2 1");
        s.finalRead("r x 2 1");
        assertValid(ListAppendChecker.STRICT);
    }

    @Test
    void aStaleReadAcrossGroupsIsSerializableButNotStrictAcrossGroups() {
        s.txnIn("1", List.of(0), "a x 1");
        // Began after the append ended, and missed it: a real-time cycle, but through a transaction of two
        // groups, for which only serializability is promised.
        s.txnIn("2", List.of(0, 1), "r x", "r y");
        s.finalRead("r x 1");
        CheckResult r = check();
        assertEquals(Validity.VALID, r.validity(), r.toString());
        assertEquals(ListAppendChecker.STRICT_PER_GROUP, r.details().get("model"));
        assertTrue(r.notes().stream().anyMatch(n -> n.contains("different groups")), r.toString());
    }

    @Test
    void readsOfOneGroupFromManyTransactionsAreValid() {
        s.txnIn("1", List.of(2), "a x 1", "a y 2");
        s.txnIn("2", List.of(2), "r x 1", "r y 2");
        s.txnIn("3", List.of(0, 2), "r x 1", "a z 3");
        s.finalRead("r x 1", "r y 2", "r z 3");
        assertValid(ListAppendChecker.STRICT);
    }

    // ---- what no serial order explains

    @Test
    void writeCycleIsG0() {
        s.txn("1", "a x 1", "a y 2");
        s.txn("2", "a x 3", "a y 4");
        s.finalRead("r x 1 3", "r y 4 2");
        assertFound("G0");
    }

    @Test
    void readOfAnAbortedAppendIsG1a() {
        s.abort(s.invoke("1", "r x", "a x 1"));
        s.txn("2", "r x 1");
        s.finalRead("r x 1");
        assertFound("G1a");
    }

    @Test
    void readOfAFailedAppendIsG1a() {
        s.fail(s.invoke("1", "a x 1"));
        s.finalRead("r x 1");
        assertFound("G1a");
    }

    @Test
    void readOfAVersionItsWriterOverwroteIsG1b() {
        s.txn("1", "a x 1", "a x 2");
        s.txn("2", "r x 1");
        s.finalRead("r x 1 2");
        assertFound("G1b");
    }

    @Test
    void eachSeeingTheOthersAppendIsG1c() {
        Op t1 = s.invoke("1", "a x 1", "r y 2");
        Op t2 = s.invoke("2", "a y 2", "r x 1");
        s.commit(t1);
        s.commit(t2);
        s.finalRead("r x 1", "r y 2");
        assertFound("G1c");
        assertTrue(!types().contains("G0") && !types().contains("G-single"), types().toString());
    }

    @Test
    void aFracturedReadAcrossGroupsIsGSingle() {
        // The transfer of values into x and y is one transaction; a read saw half of it.
        s.txnIn("1", List.of(0, 1), "a x 1", "a y 2");
        s.txnIn("2", List.of(0, 1), "r x", "r y 2");
        s.finalRead("r x 1", "r y 2");
        assertFound("G-single");
    }

    @Test
    void aLostUpdateIsGSingle() {
        Op t1 = s.invoke("1", "r x", "a x 1");
        Op t2 = s.invoke("2", "r x", "a x 2");
        Op c1 = s.commit(t1);
        Op c2 = s.commit(t2);
        s.finalRead("r x 1 2");
        assertFound("G-single");
        Anomaly a = check().anomalies().stream().filter(x -> x.type().equals("G-single")).findFirst().orElseThrow();
        assertEquals(List.of(c1.index(), c2.index()), a.ops(), "names both transactions: " + a);
    }

    @Test
    void writeSkewIsG2Item() {
        Op t1 = s.invoke("1", "r x", "r y", "a y 1");
        Op t2 = s.invoke("2", "r x", "r y", "a x 2");
        s.commit(t1);
        s.commit(t2);
        s.finalRead("r x 2", "r y 1");
        assertFound("G2-item");
        assertTrue(!types().contains("G-single"), types().toString());
    }

    @Test
    void aStaleReadWithinAGroupIsGSingleRealtime() {
        s.txn("1", "a x 1");
        s.txn("2", "r x");
        s.finalRead("r x 1");
        assertFound("G-single-realtime");
        assertEquals(ListAppendChecker.SERIALIZABLE, check().details().get("model"));
    }

    @Test
    void aReadThatMissesAnEarlierAppendOfItsOwnGroupIsAnomalyEvenBesideOtherGroups() {
        s.txnIn("1", List.of(3), "a x 1");
        s.txnIn("2", List.of(3), "r x");
        s.txnIn("3", List.of(1), "a y 2");
        s.finalRead("r x 1", "r y 2");
        assertFound("G-single-realtime");
    }

    @Test
    void aValueReadTwiceInOneListIsADuplicateAppend() {
        s.txn("1", "a x 1");
        s.finalRead("r x 1 1");
        assertFound("duplicate-append");
    }

    @Test
    void aValueNobodyAppendedIsAPhantom() {
        s.txn("1", "a x 1");
        s.finalRead("r x 1 9");
        assertFound("phantom-value");
    }

    @Test
    void aValueAppendedToAnotherKeyIsAPhantomHere() {
        s.txn("1", "a x 1");
        s.finalRead("r x 1", "r y 1");
        assertFound("phantom-value");
    }

    @Test
    void listsInTwoOrdersAreIncompatible() {
        s.txn("1", "a x 1");
        s.txn("2", "a x 2");
        s.txn("3", "r x 1 2");
        s.finalRead("r x 2 1");
        assertFound("incompatible-order");
    }

    @Test
    void aCommittedAppendMissingFromTheFinalReadIsLost() {
        s.txn("1", "a x 1");
        s.finalRead("r x");
        assertFound("lost-append");
    }

    @Test
    void anUnknownOutcomeSeenInPartIsLostInTheRest() {
        // Its append to x was seen, so it committed; then its append to y must be there too.
        s.info(s.invoke("1", "a x 1", "a y 2"));
        s.finalRead("r x 1", "r y");
        assertFound("lost-append");
    }

    @Test
    void aTransactionThatDoesNotSeeItsOwnAppendIsInternal() {
        s.txn("1", "r x", "a x 1", "r x");
        s.finalRead("r x 1");
        assertFound("internal");
    }

    @Test
    void anomalyNamesTheTransactionsThatFormIt() {
        Op t1 = s.txnIn("1", List.of(0, 1), "a x 1", "a y 2");
        Op t2 = s.txnIn("2", List.of(0, 1), "r x", "r y 2");
        s.finalRead("r x 1", "r y 2");
        Anomaly a = check().anomalies().stream().filter(x -> x.type().equals("G-single")).findFirst().orElseThrow();
        assertEquals(List.of(t1.index(), t2.index()), a.ops(), a.toString());
        assertTrue(a.detail().contains("T" + t2.index() + " read x without T" + t1.index() + "'s append of 1"), a.detail());
    }

    @Test
    void withoutFinalReadsTheCheckIsUndecided() {
        s.txn("1", "a x 1");
        s.txn("2", "r x 1");
        assertEquals(Validity.UNKNOWN, check().validity());
    }

    @Test
    void aMalformedTransactionMakesTheCheckUndecided() {
        s.txn("1", "a x 1");
        s.txn("2", "a x 1");
        s.finalRead("r x 1");
        assertEquals(Validity.UNKNOWN, check().validity(), "a value appended twice cannot name its writer");
    }
}
