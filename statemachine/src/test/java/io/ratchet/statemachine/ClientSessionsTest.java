package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Exactly-once writes through client sessions, on the store alone: entries in, results out. */
class ClientSessionsTest {
    private static final long SESSION = 0x5eed_1234_abcdL;

    private CompareExchangeStore store = new CompareExchangeStore();
    private long nextIndex = 1;

    @TempDir
    Path dir;

    private List<Result> apply(long stamp, Batch... batches) {
        return store.applyEntry(new Entry(stamp, List.of(batches)), nextIndex++);
    }

    private void open(long id, long timeoutMillis, long stamp) {
        Result opened = store.applyEntry(entry(stamp, new Command.OpenSession(id, timeoutMillis)), nextIndex++).get(0);
        assertEquals(new Result.SessionOpened(id, timeoutMillis), opened);
    }

    private static Batch tagged(long session, long sequence, Command... commands) {
        return new Batch(session, sequence, List.of(Request.of(List.of(commands))));
    }

    private static Command.Put create(String key, String value) {
        return new Command.Put(key, value, 0, null);
    }

    @Test
    void aResendAfterALostAnswerGetsTheFirstOutcomeAndAppliesNothing() {
        open(SESSION, 60_000, 1_000);
        Batch put = tagged(SESSION, 1, create("emails/ada", "\"users/1\""));
        Result.Write first = (Result.Write) apply(1_100, put).get(0);
        assertTrue(first.successful());

        // The answer was lost; the client resends the same message, through another node, later.
        Result.Write again = (Result.Write) apply(1_200, put).get(0);

        assertEquals(first, again, "the resend is answered with the first outcome, not 'the key exists'");
        assertEquals(first.index(), store.get("emails/ada").index(), "applied once");
    }

    @Test
    void theWritesOfTwoSessionsInOneEntryAreEachAppliedOnceAndAnsweredApart() {
        open(1, 60_000, 1_000);
        open(2, 60_000, 1_000);
        List<Result> results = apply(1_100, tagged(1, 1, create("a", "1")), tagged(2, 1, create("b", "2"), create("c", "3")));
        assertEquals(3, results.size());
        long index = ((Result.Write) results.get(0)).index();
        assertEquals(index, ((Result.Write) results.get(2)).index(), "one entry: one index for every write in it");

        List<Result> resentBoth = apply(1_200, tagged(2, 1, create("b", "2"), create("c", "3")), tagged(1, 1, create("a", "1")));
        assertEquals(List.of(results.get(1), results.get(2), results.get(0)), resentBoth);
    }

    @Test
    void aWriteInASessionThatWasNeverOpenedAppliesNothing() {
        List<Result> results = apply(1_000, tagged(42, 1, create("k", "1"), create("l", "2")));
        assertEquals(List.of(new Result.SessionExpired(42), new Result.SessionExpired(42)), results);
        assertNull(store.get("k"));
    }

    @Test
    void aSessionIdlePastItsTimeoutOfClusterTimeExpiresAndAWriteActiveWithinItKeepsItOpen() {
        open(SESSION, 5_000, 10_000);
        assertTrue(((Result.Write) apply(14_000, tagged(SESSION, 1, create("a", "1"))).get(0)).successful());
        // 14 s + 5 s: still open at 18.9 s of cluster time, because the write at 14 s kept it alive
        assertTrue(((Result.Write) apply(18_900, tagged(SESSION, 2, create("b", "1"))).get(0)).successful());
        // another client's entry moves cluster time past 18.9 + 5 s
        store.applyEntry(entry(24_000, create("other", "1")), nextIndex++);

        assertEquals(0, store.sessionCount());
        List<Result> late = apply(24_100, tagged(SESSION, 3, create("c", "1")));
        assertInstanceOf(Result.SessionExpired.class, late.get(0));
        assertNull(store.get("c"));
    }

    @Test
    void aResendOfAnAnsweredMessageWhoseResultsWereReleasedIsRefusedNotApplied() {
        open(SESSION, 60_000, 1_000);
        apply(1_100, tagged(SESSION, 1, create("a", "1")));
        Result.Write second = (Result.Write) apply(1_200, tagged(SESSION, 2, new Command.Delete("a", 2))).get(0);
        assertTrue(second.successful());

        // sequence 2 said "1 was answered"; a stray copy of 1 arriving now must not create "a" again
        List<Result> stray = apply(1_300, tagged(SESSION, 1, create("a", "1")));

        assertInstanceOf(Result.Rejected.class, stray.get(0));
        assertNull(store.get("a"));
    }

    @Test
    void reopeningAnOpenSessionAnswersAsTheFirstOpenAndKeepsItsState() {
        open(SESSION, 60_000, 1_000);
        Result first = apply(1_100, tagged(SESSION, 1, create("a", "1"))).get(0);
        open(SESSION, 60_000, 1_200);
        assertEquals(first, apply(1_300, tagged(SESSION, 1, create("a", "1"))).get(0));
    }

    @Test
    void beyondTheSessionLimitTheSessionIdleLongestIsExpiredFirst() {
        for (long id = 1; id <= ClientSessions.MAX_SESSIONS; id++) {
            store.applyEntry(entry(1_000 + id, new Command.OpenSession(id, 3_600_000)), nextIndex++);
        }
        open(ClientSessions.MAX_SESSIONS + 1, 3_600_000, 500_000);

        assertEquals(ClientSessions.MAX_SESSIONS, store.sessionCount());
        assertInstanceOf(Result.SessionExpired.class, apply(500_001, tagged(1, 1, create("a", "1"))).get(0));
        assertInstanceOf(Result.Write.class, apply(500_002, tagged(2, 1, create("b", "1"))).get(0));
    }

    @Test
    void sessionsSurviveASnapshotAndAResendAfterRestoreGetsTheFirstOutcome() throws IOException {
        open(SESSION, 60_000, 1_000);
        Batch put = tagged(SESSION, 1, create("emails/ada", "\"users/1\""));
        Result first = apply(1_100, put).get(0);
        Path file = dir.resolve("snapshot.1_2");
        SnapshotFile.write(store, file);

        store = SnapshotFile.read(file);

        assertEquals(1, store.sessionCount());
        assertEquals(first, apply(1_200, put).get(0));
        assertFalse(((Result.Write) apply(1_300, tagged(SESSION, 2, create("emails/ada", "\"users/2\""))).get(0)).successful());
    }
}
