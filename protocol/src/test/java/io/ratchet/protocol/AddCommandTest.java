package io.ratchet.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The commutative add as the protocol carries it: what it accepts, what counts as an integer, where it may stand. */
class AddCommandTest {
    @Test
    void anAddAndItsAnswersRoundTrip() {
        List<Request> requests = List.of(new Request("idem", 60_000, List.of(new Command.Add("counters/hits", Long.MIN_VALUE))),
                Request.of(List.of(new Command.Add("k€y", 1), new Command.Put("b", "1", 0, null))));
        assertEquals(requests, Codec.decodeRequests(Codec.encodeRequests(requests)));
        Item item = new Item("k", "\"x\"", 3, 2, 0, null);
        List<Result> results = List.of(new Result.NotAnInteger("k", item), new Result.Overflow("k", item, 5),
                new Result.Unsupported("add", "node n3 runs a release without add"));
        assertEquals(results, Codec.decodeResults(Codec.encodeResults(results)));
    }

    @Test
    void onlyAWritableKeyIsAddedTo() {
        new Command.Add("counters/hits", -7).validate();
        assertThrows(InvalidCommandException.class, () -> new Command.Add("", 1).validate());
        assertThrows(InvalidCommandException.class, () -> new Command.Add("x".repeat(Limits.MAX_KEY_BYTES + 1), 1).validate());
        InvalidCommandException guard = assertThrows(InvalidCommandException.class,
                () -> new Command.Add(Limits.RESERVED_GUARD_PREFIX + "u/1", 1).validate());
        assertTrue(guard.getMessage().contains("reserved"), guard.getMessage());
    }

    @Test
    void anIntegerIsAJsonNumberWithNeitherFractionNorExponentInTheSigned64BitRange() {
        assertEquals(0L, Command.Add.integerOf("0"));
        assertEquals(0L, Command.Add.integerOf("-0"));
        assertEquals(42L, Command.Add.integerOf(" 42\n"));
        assertEquals(Long.MAX_VALUE, Command.Add.integerOf("9223372036854775807"));
        assertEquals(Long.MIN_VALUE, Command.Add.integerOf("-9223372036854775808"));
        for (String notOne : List.of("9223372036854775808", "-9223372036854775809", "1.5", "5.0", "1e3", "\"5\"",
                "{\"n\":1}", "[1]", "true", "007", "+1", "")) {
            assertNull(Command.Add.integerOf(notOne), notOne);
        }
    }

    @Test
    void anAddStandsAloneAndIsRefusedInsideATransactionOnTheWire() {
        // A transaction of one delete, whose tag is then turned into the add's: the codec names why it refuses.
        byte[] txn = Codec.encodeRequests(List.of(Request.of(List.of(new Command.Transaction(List.of(new Command.Delete("k", 1)))))));
        txn[2 + 4 + 4 + 8 + 4 + 1 + 4] = Command.Kind.ADD.tag();
        InvalidCommandException e = assertThrows(InvalidCommandException.class, () -> Codec.decodeRequests(txn));
        assertEquals("command type 14 (add) stands alone: it is not an operation of a transaction", e.getMessage());
    }

    @Test
    void aNodeTellsAnotherWhichCommandsItsReleaseApplies() {
        Set<Command.Kind> all = Set.of(Command.Kind.values());
        assertEquals(all, ReleaseRpc.decode(ReleaseRpc.encode(all)));
        assertEquals(Set.of(Command.Kind.PUT), ReleaseRpc.decode(new byte[] {1, 99}), "a later release's tags are left out");
    }
}
