package io.ratchet.statemachine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Request;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** "The same request" is decided by a canonical form that stays put, and tells every field apart. */
class RequestFingerprintTest {
    private static long fingerprint(Command... commands) {
        return new RequestFingerprint().of(Request.of(List.of(commands)));
    }

    @Test
    void theFingerprintOfAKnownRequestNeverChanges() {
        // Pinned: a change here changes which resends count as the same request, on disk and between
        // nodes of different builds. Such a change needs a new version label in RequestFingerprint.
        assertEquals(PINNED, fingerprint(new Command.Put("orders/7", "{\"total\":12}", 0, null),
                new Command.Transaction(List.of(new Command.Check("stock/widgets", 5), new Command.DeleteDocument("carts/7", 9)))));
    }

    private static final long PINNED = -5562729063290249405L;

    @Test
    void idempotencyKeyAndRetentionAreNotPartOfIt() {
        Command put = new Command.Put("k", "1", 0, null);
        RequestFingerprint f = new RequestFingerprint();
        assertEquals(f.of(new Request("a", 1_000, List.of(put))), f.of(new Request("b", 60_000, List.of(put))));
    }

    @Test
    void everyFieldOfEveryCommandTellsRequestsApart() {
        List<Command> variants = List.of(
                new Command.Put("k", "1", 0, null),
                new Command.Put("K", "1", 0, null),
                new Command.Put("k", "2", 0, null),
                new Command.Put("k", "1", 3, null),
                new Command.Put("k", "1", 0, "{}"),
                new Command.Put("k", "1", 0, null, 1_000, false),
                new Command.Put("k", "1", 0, null, 1_000, true),
                new Command.Delete("k", 3),
                new Command.Delete("k", 4),
                new Command.Transaction(List.of(new Command.Check("k", 0))),
                new Command.Transaction(List.of(new Command.Check("k", 1))),
                new Command.Transaction(List.of(new Command.PutDocument("d", "{}", 0))),
                new Command.Transaction(List.of(new Command.PutDocument("d", "{}", 1))),
                new Command.Transaction(List.of(new Command.DeleteDocument("d", 1))),
                new Command.OpenSession(1, 60_000),
                new Command.OpenSession(2, 60_000),
                new Command.Add("k", 1),
                new Command.Add("K", 1),
                new Command.Add("k", -1));
        Set<Long> prints = variants.stream().map(RequestFingerprintTest::fingerprint).collect(Collectors.toSet());
        assertEquals(variants.size(), prints.size());
        // A string's length is part of it: the field boundary cannot move between two strings.
        assertNotEquals(fingerprint(new Command.Transaction(List.of(new Command.PutDocument("ab", "c", 0)))),
                fingerprint(new Command.Transaction(List.of(new Command.PutDocument("a", "bc", 0)))));
    }
}
