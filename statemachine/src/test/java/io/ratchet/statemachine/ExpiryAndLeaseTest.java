package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Result;
import java.util.List;
import java.util.function.LongUnaryOperator;
import org.junit.jupiter.api.Test;

/** Expiry, leases and sweeps, with cluster time given explicitly by each entry's stamp. */
class ExpiryAndLeaseTest {
    private static final long T0 = 1_700_000_000_000L;
    private final CompareExchangeStore store = new CompareExchangeStore();
    private long nextIndex = 1;

    private Result at(long stamp, Command command) {
        return store.applyEntry(entry(stamp, command), nextIndex++).get(0);
    }

    private Result.Write acquire(long stamp, String owner, long leaseMillis) {
        return (Result.Write) at(stamp, new Command.Put("locks/printer", "\"" + owner + "\"", 0, null, leaseMillis, true));
    }

    @Test
    void aTtlSetsExpiresFromClusterTimeNotFromTheClient() {
        Result.Write w = acquire(T0, "alice", 30_000);
        assertTrue(w.successful());
        assertEquals(T0 + 30_000, w.item().expiresAt());
        assertEquals("{\"@expires\":\"2023-11-14T22:13:50Z\"}", w.item().metadata());
    }

    @Test
    void expiryBoundaryJustBeforeAtAndJustAfter() {
        long index = acquire(T0, "alice", 10_000).index();
        long expiry = T0 + 10_000;
        assertFalse(acquire(expiry - 1, "bob", 10_000).successful(), "1 ms before expiry the lease holds");
        assertEquals(index, store.get("locks/printer").index());
        Result.Write atExpiry = acquire(expiry, "bob", 10_000);
        assertTrue(atExpiry.successful(), "at the expiry instant the item has expired");
        assertEquals("\"bob\"", atExpiry.item().value());
        assertTrue(acquire(expiry + 10_001, "carol", 10_000).successful(), "and after it too");
    }

    @Test
    void acquiringOverAnExpiredHolderStartsANewGrantWithAHigherFencingToken() {
        Result.Write alice = acquire(T0, "alice", 1_000);
        Result.Write bob = acquire(T0 + 5_000, "bob", 1_000);
        assertTrue(bob.successful());
        assertEquals(bob.index(), bob.item().createdIndex(), "the acquiring entry's index is the token");
        assertTrue(bob.item().createdIndex() > alice.item().createdIndex(), "tokens strictly increase across holders");
        assertEquals("locks/printer", bob.key());
    }

    @Test
    void aFailedAcquireReturnsTheHolderAndItsExpiry() {
        Result.Write alice = acquire(T0, "alice", 30_000);
        Result.Write bob = acquire(T0 + 1, "bob", 30_000);
        assertFalse(bob.successful());
        assertEquals(alice.item(), bob.item());
    }

    @Test
    void renewalKeepsTheTokenMovesTheIndexAndExtendsTheLease() {
        Result.Write granted = acquire(T0, "alice", 10_000);
        Result.Write renewed = (Result.Write) at(T0 + 5_000,
                new Command.Put("locks/printer", "\"alice\"", granted.index(), null, 10_000, false));
        assertTrue(renewed.successful());
        assertEquals(granted.item().createdIndex(), renewed.item().createdIndex(), "the fencing token is constant");
        assertTrue(renewed.index() > granted.index());
        assertEquals(T0 + 15_000, renewed.item().expiresAt());
    }

    @Test
    void renewingALeaseThatRanOutFailsEvenIfNobodyTookIt() {
        Result.Write granted = acquire(T0, "alice", 10_000);
        Result.Write late = (Result.Write) at(T0 + 10_000,
                new Command.Put("locks/printer", "\"alice\"", granted.index(), null, 10_000, false));
        assertFalse(late.successful());
        assertEquals(granted.index(), late.index());
    }

    @Test
    void plainCreateOnlyIgnoresExpiryUnlessAsked() {
        acquire(T0, "alice", 1_000);
        Result.Write plain = (Result.Write) at(T0 + 9_000, new Command.Put("locks/printer", "\"bob\"", 0, null));
        assertFalse(plain.successful(), "create-only without 'expired counts as absent' needs a truly absent key");
    }

    @Test
    void expiresMetadataGivenAsAnInstantIsHonoured() {
        at(T0, new Command.Put("sessions/1", "1", 0, "{\"@expires\":\"2023-11-14T22:13:21Z\",\"who\":\"ada\"}"));
        Item item = store.get("sessions/1");
        assertEquals(T0 + 1_000, item.expiresAt());
        assertEquals(List.of(), store.expiredAt(T0 + 999, 10));
        assertEquals(List.of(new Command.KeyIndex("sessions/1", item.index())), store.expiredAt(T0 + 1_000, 10));
    }

    @Test
    void badExpiryInputIsRejected() {
        assertInstanceOf(Result.Rejected.class, at(T0, new Command.Put("a", "1", 0, "{\"@expires\":\"tomorrow\"}")));
        assertInstanceOf(Result.Rejected.class, at(T0, new Command.Put("a", "1", 0, "{\"@expires\":42}")));
        assertInstanceOf(Result.Rejected.class, at(T0, new Command.Put("a", "1", 0, null, -1, false)));
        assertInstanceOf(Result.Rejected.class, at(T0, new Command.Put("a", "1", 0,
                "{\"@expires\":\"2030-01-01T00:00:00Z\"}", 1_000, false)));
        assertInstanceOf(Result.Rejected.class, at(T0, new Command.Put("a", "1", 5, null, 1_000, true)));
        assertEquals(0, store.size());
    }

    @Test
    void aSweepRemovesOnlyItemsStillExpiredAtTheirProposedIndex() {
        Result.Write a = (Result.Write) at(T0, new Command.Put("a", "1", 0, null, 1_000, false));
        Result.Write b = (Result.Write) at(T0, new Command.Put("b", "1", 0, null, 1_000, false));
        Result.Write c = (Result.Write) at(T0, new Command.Put("c", "1", 0, null, 60_000, false));
        List<Command.KeyIndex> proposed = store.expiredAt(T0 + 1_500, 1024);
        assertEquals(2, proposed.size(), "only a and b are due");
        // b is renewed after the sweep was proposed but before it applies
        Result.Write renewed = (Result.Write) at(T0 + 900, new Command.Put("b", "2", b.index(), null, 5_000, false));
        assertTrue(renewed.successful());

        Result.Swept swept = (Result.Swept) at(T0 + 1_500, new Command.Sweep(proposed));
        assertEquals(1, swept.removed());
        assertNull(store.get("a"));
        assertNotNull(store.get("b"), "the renewed item is kept");
        assertNotNull(store.get("c"));
        assertTrue(store.lastChange("a") > a.index(), "the sweep's delete is a change watchers see");
        assertEquals(c.index(), store.lastChange("c"));
    }

    @Test
    void aSweepProposedByAFastClockDoesNothingBeforeClusterTimeGetsThere() {
        at(T0, new Command.Put("a", "1", 0, null, 10_000, false));
        List<Command.KeyIndex> proposed = store.expiredAt(T0 + 20_000, 1024);
        Result.Swept swept = (Result.Swept) at(T0 + 5_000, new Command.Sweep(proposed));
        assertEquals(0, swept.removed(), "apply judges on the entry's cluster time, not the proposer's clock");
        assertNotNull(store.get("a"));
    }

    @Test
    void lastChangeRemembersDeletesForWatches() {
        long created = ((Result.Write) at(T0, new Command.Put("k", "1", 0, null))).index();
        assertEquals(created, store.lastChange("k"));
        Result.Write deleted = (Result.Write) at(T0, new Command.Delete("k", created));
        assertTrue(deleted.successful());
        assertEquals(nextIndex - 1, store.lastChange("k"));
        assertEquals(0, store.lastChange("never-written"));
    }

    @Test
    void aNewLeaderWhoseClockLagsEndsALeaseLateByAtMostTheLagAndNeverTurnsTimeBack() {
        long expiry = acquire(T0, "alice", 10_000).item().expiresAt();
        at(T0 + 9_000, new Command.Put("other", "1", 0, null)); // the old leader's last stamp
        long lag = 2_000;
        LongUnaryOperator newLeaderStampAt = realTime -> realTime - lag;

        assertFalse(acquire(newLeaderStampAt.applyAsLong(T0 + 9_500), "bob", 10_000).successful());
        assertEquals(T0 + 9_000, store.clusterTime(), "an older stamp does not turn cluster time back");
        assertFalse(acquire(newLeaderStampAt.applyAsLong(expiry + lag - 1), "bob", 10_000).successful(),
                "1 ms short of expiry + lag in real time, the lease still holds");
        assertTrue(acquire(newLeaderStampAt.applyAsLong(expiry + lag), "bob", 10_000).successful(),
                "at expiry + lag it has ended: late by the lag, not more");
    }

    @Test
    void aNewLeaderWhoseClockLeadsEndsALeaseEarlyByAtMostTheLead() {
        long expiry = acquire(T0, "alice", 10_000).item().expiresAt();
        long lead = 2_000;
        LongUnaryOperator newLeaderStampAt = realTime -> realTime + lead;

        assertFalse(acquire(newLeaderStampAt.applyAsLong(expiry - lead - 1), "bob", 10_000).successful(),
                "until expiry - lead in real time, the lease holds");
        assertTrue(acquire(newLeaderStampAt.applyAsLong(expiry - lead), "bob", 10_000).successful(),
                "at expiry - lead it has ended: early by the lead, not more");
    }
}
