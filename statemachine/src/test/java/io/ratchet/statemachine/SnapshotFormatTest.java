package io.ratchet.statemachine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshots written by an earlier build still read, and what they remember still answers as it did.
 * The fixture was written by the build before the snapshot got its own layout (format 3): an email
 * reserved with metadata at 1, a document at 2, a put with idempotency key "order-7" at 3, session 42
 * opened at 4, and that session's sequence 1 putting stock/widgets with a 30 s ttl at 5.
 */
class SnapshotFormatTest {
    @TempDir
    Path dir;

    private CompareExchangeStore format3() throws IOException {
        Path file = dir.resolve("format-3.snapshot");
        try (InputStream in = SnapshotFormatTest.class.getResourceAsStream("/snapshots/format-3.snapshot")) {
            Files.copy(in, file);
        }
        return SnapshotFile.read(file);
    }

    private static Request order7(String value) {
        return new Request("order-7", 3_600_000, List.of(new Command.Put("orders/7", value, 0, null)));
    }

    private static Batch sessionResend() {
        return new Batch(42, 1, List.of(Request.of(List.of(new Command.Put("stock/widgets", "5", 0, null, 30_000, false)))));
    }

    @Test
    void aFormat3SnapshotReadsWithEveryItemDocumentAndTime() throws IOException {
        CompareExchangeStore store = format3();
        assertEquals(5, store.lastEntryIndex());
        assertEquals(1_400, store.clusterTime());
        Item email = store.get("emails/ada@example.com");
        assertEquals("\"users/1\"", email.value());
        assertEquals("{\"source\":\"signup\"}", email.metadata());
        assertEquals(1, email.index());
        assertEquals("{\"name\":\"Ada\"}", store.document("users/1").json());
        assertEquals(2, store.document("users/1").index());
        assertEquals(31_400, store.get("stock/widgets").expiresAt());
        assertEquals(1, store.sessionCount());
    }

    @Test
    void itsIdempotencyKeysAndSessionStillAnswerResendsAndRefuseOtherRequests() throws IOException {
        CompareExchangeStore store = format3();
        List<Result> resent = store.applyEntry(Entry.untagged(2_000, List.of(order7("{\"total\":12}"))), 6);
        Result.Write again = assertInstanceOf(Result.Write.class, resent.get(0));
        assertTrue(again.successful());
        assertEquals(3, again.index(), "the remembered result, not a second write");

        List<Result> other = store.applyEntry(Entry.untagged(2_100, List.of(order7("{\"total\":13}"))), 7);
        assertInstanceOf(Result.Rejected.class, other.get(0), "the key was used for a different request");
        assertEquals("{\"total\":12}", store.get("orders/7").value());

        List<Result> session = store.applyEntry(new Entry(2_200, List.of(sessionResend())), 8);
        assertEquals(5, assertInstanceOf(Result.Write.class, session.get(0)).index(), "the session's last results");
        assertEquals(5, store.get("stock/widgets").index());
    }

    @Test
    void writtenBackInTheCurrentFormatItAnswersTheSame() throws IOException {
        Path rewritten = dir.resolve("format-current.snapshot");
        SnapshotFile.write(format3(), rewritten);
        CompareExchangeStore store = SnapshotFile.read(rewritten);
        assertEquals(5, store.lastEntryIndex());
        Result.Write again = assertInstanceOf(Result.Write.class,
                store.applyEntry(Entry.untagged(2_000, List.of(order7("{\"total\":12}"))), 6).get(0));
        assertEquals(3, again.index());
        assertInstanceOf(Result.Rejected.class,
                store.applyEntry(Entry.untagged(2_100, List.of(order7("{\"total\":13}"))), 7).get(0));
    }
}
