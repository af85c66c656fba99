package io.ratchet.client;

import io.ratchet.client.internal.Attempts;
import io.ratchet.client.internal.Transport;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.Rpc;
import io.ratchet.testing.InProcessCluster;
import io.ratchet.testing.InProcessClusterExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import static io.ratchet.testing.InProcessCluster.N1;
import static io.ratchet.testing.InProcessCluster.N2;
import static io.ratchet.testing.InProcessCluster.N3;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client against {@link InProcessCluster}: the real store behind the client's own connector seam. */
@Timeout(10)
@ExtendWith(InProcessClusterExtension.class)
class RatchetClientTest {
    private InProcessCluster cluster;
    private RatchetClient client;

    @BeforeEach
    void start(InProcessCluster cluster) {
        this.cluster = cluster;
        client = cluster.client(InProcessCluster.options(N1));
    }

    // ---- cancelling a watch

    @Test
    void theContentionQueryNamesTheKeyWhoseConditionWasRefusedAsANodeCountsIt() {
        client.put("counters/hot", 1, 0);
        client.put("counters/hot", 2, 0);          // refused: the key exists
        client.put("counters/calm", 1, 0);

        Result.Contention seen = client.contention(5).value();
        assertEquals(List.of(new Result.KeyContention("counters/hot", 1, 0, 1)), seen.keys(),
                "only a key with a refused condition is counted, from its first refusal on");
    }

    @Test
    void aCancelledWatchIsNotArmedAgainWhileAnUncancelledOneIs() {
        long index = client.put("watched/k", 1, 0).index();
        CompletableFuture<WatchResult> kept = client.watchAsync("watched/k", index, Duration.ofSeconds(20));
        CompletableFuture<WatchResult> cancelled = client.watchAsync("watched/k", index, Duration.ofSeconds(20));
        await().atMost(Duration.ofSeconds(2)).until(() -> cluster.pendingWatches() == 2);

        assertTrue(cancelled.cancel(false));

        // The cancelled watch's slice (at most two seconds) ends and is not armed again; the other is.
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.pendingWatches() == 1);
        await().during(Duration.ofMillis(2_500)).atMost(Duration.ofSeconds(4)).until(() -> cluster.pendingWatches() == 1);
        assertFalse(kept.isDone());
        client.put("watched/k", 2, index);
        assertTrue(kept.join().changed(), "the kept watch still answers the change");
    }

    // ---- conditional writes

    @Test
    void createOnlyPutIsRefusedWithTheCurrentItem() {
        CompareExchangeResult first = client.put("users/1", Map.of("name", "ada"), 0);
        assertTrue(first.successful());
        assertEquals(cluster.lastIndex(), first.index(), "an item's index is its entry's log index");
        assertEquals(first.index(), first.createdIndex());

        CompareExchangeResult second = client.put("users/1", Map.of("name", "bob"), 0);

        assertFalse(second.successful());
        assertEquals(first.index(), second.index());
        assertEquals("{\"name\":\"ada\"}", second.value(), "the refusal carries the item as it is");
        assertEquals("{\"name\":\"ada\"}", cluster.item("users/1").orElseThrow().value(), "nothing was written");
    }

    @Test
    void updateAtTheCurrentIndexMovesTheIndexAndKeepsTheCreation() {
        CompareExchangeResult created = client.put("k", 1, 0);
        CompareExchangeResult updated = client.put("k", 2, created.index());

        assertTrue(updated.successful());
        assertTrue(updated.index() > created.index());
        assertEquals(created.index(), updated.createdIndex());
        assertEquals("2", updated.value());
        Item stored = cluster.item("k").orElseThrow();
        assertEquals(updated.index(), stored.index());
        assertEquals("2", stored.value());
    }

    @Test
    void aRefusedConditionReturnsTheCurrentValueAndIndex() {
        CompareExchangeResult created = client.put("k", "a", 0);
        CompareExchangeResult updated = client.put("k", "b", created.index());

        CompareExchangeResult stale = client.put("k", "c", created.index());

        assertFalse(stale.successful());
        assertEquals(updated.index(), stale.index());
        assertEquals("\"b\"", stale.value());
        assertEquals("\"b\"", cluster.item("k").orElseThrow().value());
        // A retry loop recomputes from the refusal, without reading again.
        assertTrue(client.put("k", "c", stale.index()).successful());
    }

    @Test
    void deleteAtTheCurrentIndexRemovesTheItemAndAStaleOneIsRefused() {
        CompareExchangeResult created = client.put("k", "v", 0);
        CompareExchangeResult updated = client.put("k", "w", created.index());

        CompareExchangeResult stale = client.delete("k", created.index());
        assertFalse(stale.successful());
        assertEquals(updated.index(), stale.index());
        assertTrue(cluster.item("k").isPresent());

        CompareExchangeResult deleted = client.delete("k", updated.index());
        assertTrue(deleted.successful());
        assertNull(deleted.item());
        assertTrue(cluster.item("k").isEmpty());
        assertEquals(Optional.empty(), client.get("k"));

        CompareExchangeResult absent = client.delete("k", updated.index());
        assertFalse(absent.successful());
        assertNull(absent.item());
    }

    @Test
    void keysCompareCaseInsensitivelyAndKeepTheirFirstSpelling() {
        client.put("Users/Ada", 1, 0);

        CompareExchangeResult other = client.put("users/ada", 2, 0);

        assertFalse(other.successful());
        assertEquals("Users/Ada", other.key());
        assertEquals("Users/Ada", client.get("USERS/ADA").orElseThrow().key());
    }

    @Test
    void aTransactionAppliesAllOrNothingAndNamesEveryConflict() {
        CompareExchangeResult a = client.put("a", 1, 0);

        TransactionResult refused = client.transaction(List.of(
                new Command.Put("a", "2", a.index(), null),
                new Command.Put("b", "2", 7, null)));
        assertFalse(refused.successful());
        assertEquals(List.of(new Result.Conflict("b", 7, 0)), refused.conflicts());
        assertEquals("1", cluster.item("a").orElseThrow().value(), "a refused transaction writes nothing");

        TransactionResult done = client.transaction(List.of(
                new Command.Put("a", "2", a.index(), null),
                new Command.Put("b", "2", 0, null)));
        assertTrue(done.successful());
        assertEquals(cluster.lastIndex(), done.index());
        assertEquals(done.index(), cluster.item("a").orElseThrow().index());
        assertEquals(done.index(), cluster.item("b").orElseThrow().index());
    }

    // ---- reads

    @Test
    void readsAnswerFromTheStore() {
        client.put("p/a", 1, 0);
        client.put("p/b", 2, 0);
        client.put("q/c", 3, 0);

        assertEquals("2", client.get("p/b").orElseThrow().value());
        assertEquals(List.of("p/a", "q/c"), client.getAll(List.of("q/c", "p/a", "missing")).stream().map(Item::key).toList());
        assertEquals(List.of("p/a", "p/b"), client.list("p/", 0, 10).stream().map(Item::key).toList());
        assertEquals(List.of("p/b"), client.list("p/", 1, 10).stream().map(Item::key).toList());
        StaleRead<Optional<Item>> stale = client.getStale("q/c");
        assertEquals("3", stale.value().orElseThrow().value());
        assertTrue(InProcessCluster.NODES.containsValue(stale.servedBy()));
    }

    @Test
    void manyGetsAtOnceEachGetTheirOwnItem() {
        for (int i = 0; i < 20; i++) {
            client.put("k" + i, i, 0);
        }
        List<CompletableFuture<Optional<Item>>> gets = new java.util.ArrayList<>();
        for (int i = 0; i < 20; i++) {
            gets.add(client.getAsync("k" + i));
        }
        for (int i = 0; i < 20; i++) {
            assertEquals(String.valueOf(i), gets.get(i).join().orElseThrow().value());
        }
    }

    @Test
    void aDocumentWrittenInATransactionIsReadWithItsGuardIndex() {
        TransactionResult saved = client.transaction(List.of(new Command.PutDocument("users/1", "{\"name\":\"ada\"}", 0)));
        assertTrue(saved.successful());

        Document doc = client.getDocument("USERS/1").orElseThrow();

        assertEquals("{\"name\":\"ada\"}", doc.json());
        assertEquals(saved.index(), doc.index());
        assertEquals(saved.index(), cluster.item(Document.guardKey("users/1")).orElseThrow().index());
        assertEquals(Optional.empty(), client.getDocument("users/2"));
    }

    @Test
    void aWatchAnswersWhenAnotherClientChangesTheKey() {
        CompareExchangeResult created = client.put("w", "v1", 0);
        CompletableFuture<WatchResult> watch = client.watchAsync("w", created.index(), Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.pendingWatches() == 1);
        assertFalse(watch.isDone());

        CompareExchangeResult changed = cluster.client().put("w", "v2", created.index());

        WatchResult result = watch.join();
        assertTrue(result.changed());
        assertEquals(changed.index(), result.lastChange());
        assertEquals("\"v2\"", result.item().orElseThrow().value());
    }

    @Test
    void aWatchReportsADeletionWithTheDeletingIndex() {
        CompareExchangeResult created = client.put("w", "v1", 0);
        CompletableFuture<WatchResult> watch = client.watchAsync("w", created.index(), Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster.pendingWatches() == 1);

        client.delete("w", created.index());

        WatchResult result = watch.join();
        assertTrue(result.changed());
        assertEquals(cluster.lastIndex(), result.lastChange());
        assertEquals(Optional.empty(), result.item());
    }

    @Test
    void aWatchOnAnIndexAlreadyPassedAnswersAtOnce() {
        CompareExchangeResult created = client.put("w", "v1", 0);
        client.put("w", "v2", created.index());

        WatchResult result = client.watch("w", created.index(), Duration.ofSeconds(30));

        assertTrue(result.changed());
        assertEquals(0, cluster.pendingWatches());
    }

    @Test
    void aWatchWithoutAChangeEndsAtItsTimeoutUnchanged() {
        CompareExchangeResult created = client.put("w", "v1", 0);
        long start = System.nanoTime();

        WatchResult result = client.watch("w", created.index(), Duration.ofMillis(150));

        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertFalse(result.changed());
        assertEquals(created.index(), result.lastChange());
        assertTrue(tookMillis >= 140, "ended after " + tookMillis + " ms");
        assertTrue(tookMillis < 150 + RatchetClient.WATCH_SLACK.toMillis(), "ended after " + tookMillis + " ms");
    }

    // ---- the way to the leader

    @Test
    void aNotLeaderRefusalIsFollowedToTheLeaderItNames() {
        cluster.leader(N3);

        CompareExchangeResult put = client.put("k", "v", 0);

        assertTrue(put.successful());
        List<InProcessCluster.Call> writes = cluster.writeCalls();
        assertEquals(N1, writes.get(0).address(), "the client knew only n1");
        assertEquals(N3, writes.get(1).address(), "n1 named n3, a node the client was not given");
        assertTrue(writes.stream().skip(1).allMatch(c -> c.address().equals(N3)), "and it stays there: " + writes);
        assertEquals(2, cluster.writesApplied(), "the session's open and the put, once each");
        assertEquals(put.index(), cluster.item("k").orElseThrow().index());
    }

    @Test
    void aNodeThatRefusesConnectionsIsSkippedAndTheLeaderIsRemembered() {
        RatchetClient all = cluster.client();
        cluster.down(N1);
        cluster.leader(N2);

        assertTrue(all.put("k", "v", 0).successful());
        assertEquals(2, cluster.writesApplied(), "the session's open and the put, once each");
        int before = cluster.writeCalls().size();

        assertTrue(all.put("k2", "v", 0).successful());

        List<InProcessCluster.Call> after = cluster.writeCalls().subList(before, cluster.writeCalls().size());
        assertEquals(List.of(N2), after.stream().map(InProcessCluster.Call::address).toList(),
                "the next write goes straight to the leader it found");
        assertTrue(all.get("k").isPresent());
    }

    @Test
    void aClientThatOnlyReadsMovesToTheLeaderAFollowerNames() {
        RatchetClient reader = cluster.client(InProcessCluster.options(N1));
        cluster.leader(N3);
        client.put("k", "v", 0);
        int before = cluster.calls().size();

        for (int i = 0; i < 3; i++) {
            assertTrue(reader.get("k").isPresent());
        }

        List<String> served = cluster.calls().subList(before, cluster.calls().size()).stream()
                .map(InProcessCluster.Call::address).toList();
        assertEquals(List.of(N1, N3, N3), served, "the follower served the first read, and named the leader for the rest");
    }

    @Test
    void aTlsHandshakeRefusedBySomeNodesIsSkippedAndByEveryNodeEndsTheRetriesAtOnce() {
        RatchetClient all = cluster.client();
        cluster.refuseTls(N1);
        cluster.leader(N2);
        assertTrue(all.put("k", "v", 0).successful(), "another node serves");

        cluster.refuseTls(N2);
        cluster.refuseTls(N3);
        int before = cluster.calls().size();
        ClusterUnavailableException refused = assertThrows(ClusterUnavailableException.class, () -> all.get("k"));

        assertTrue(refused.getMessage().contains("every node refused the TLS handshake"), refused.getMessage());
        assertEquals(3, cluster.calls().size() - before, "one attempt per node, then no more");
    }

    @Test
    void withoutALeaderAWriteFailsAsUnavailableAndIsNotApplied() {
        RatchetClient impatient = cluster.client(InProcessCluster.options(N1)
                .withTimeouts(Duration.ofMillis(200), 3, Duration.ofMillis(300)));
        impatient.put("warm", 0, 0); // opens the session: what fails below is the write itself
        cluster.leader(null);
        int before = cluster.writeCalls().size();

        CompletionException e = assertThrows(CompletionException.class, () -> impatient.putAsync("k", "v", 0).join());

        assertInstanceOf(ClusterUnavailableException.class, e.getCause(), "refused before Raft: certainly not applied");
        assertEquals(2, cluster.writesApplied(), "only the open and the warm-up");
        assertTrue(cluster.item("k").isEmpty());
        assertTrue(cluster.writeCalls().size() - before > 1, "it was retried within its budget");
    }

    // ---- lost answers: exactly once, or in doubt

    @Test
    void aLostAnswerIsResentAndTheWriteAppliesOnce() {
        client.put("warm", 0, 0); // opens the session
        long before = cluster.lastIndex();
        cluster.dropAnswers(1);

        CompareExchangeResult put = client.put("k", "v", 0);

        assertTrue(put.successful(), "the resend is answered with the first outcome, not refused as a duplicate");
        assertEquals(before + 1, put.index(), "applied by the first delivery");
        assertEquals(before + 2, cluster.lastIndex(), "the resend took an entry, and changed nothing");
        assertEquals(put.index(), cluster.item("k").orElseThrow().index());
        assertEquals(3, cluster.writeCalls().stream().filter(c -> !c.opensSession()).count(), "warm, k, k again");
    }

    @Test
    void aWriteThatIsNeverAnsweredIsInDoubt() {
        client.put("warm", 0, 0);
        long before = cluster.lastIndex();
        cluster.dropAnswers(Integer.MAX_VALUE);

        CompletionException e = assertThrows(CompletionException.class, () -> client.putAsync("k", "v", 0).join());

        assertInstanceOf(UnknownOutcomeException.class, e.getCause());
        Item applied = cluster.item("k").orElseThrow(() -> new AssertionError("the first delivery applied it"));
        assertEquals(before + 1, applied.index(), "and only the first: resends changed nothing");
        assertEquals(InProcessCluster.options().maxAttempts(), cluster.writesApplied() - 2,
                "one delivery per unanswered attempt, up to maxAttempts");
    }

    @Test
    void anAnswerSlowerThanTheAttemptTimeoutIsInDoubt() {
        RatchetClient quick = cluster.client(InProcessCluster.options(N1)
                .withTimeouts(Duration.ofMillis(150), 2, Duration.ofSeconds(2)));
        quick.put("warm", 0, 0);
        cluster.delayAnswers(Duration.ofMillis(800));

        CompletionException e = assertThrows(CompletionException.class, () -> quick.putAsync("k", "v", 0).join());

        assertInstanceOf(UnknownOutcomeException.class, e.getCause());
        cluster.delayAnswers(Duration.ZERO);
        assertTrue(cluster.item("k").isPresent(), "the node applied it; only the answer was late");
    }

    @Test
    void aCallHeldByALeaderThatHandedOverIsHedgedToTheNewLeader() {
        RatchetClient client = cluster.client(InProcessCluster.options(N1, N2, N3));
        client.put("warm", 0, 0);
        int applied = cluster.writesApplied();
        // N1 handed leadership to N2 and, starved, holds what it is sent: the client still believes in N1.
        cluster.leader(N2);
        cluster.hold(N1);

        CompareExchangeResult put = client.put("k", "v", 0);

        assertTrue(put.successful());
        assertEquals(1, cluster.heldUnanswered(), "answered through the hedge while N1 still held the call");
        assertEquals(applied + 1, cluster.writesApplied(), "applied once");
        long toN2 = cluster.writeCalls().stream().filter(c -> c.address().equals(N2)).count();
        client.put("k2", "v", 0);
        assertEquals(toN2 + 1, cluster.writeCalls().stream().filter(c -> c.address().equals(N2)).count(),
                "the next write goes straight to the new leader");
    }

    @Test
    void aHedgeThatLearnsNothingChangesNothing() {
        RatchetClient client = cluster.client(InProcessCluster.options(N1, N2, N3));
        client.put("warm", 0, 0);
        int applied = cluster.writesApplied();
        // Slower than the hedge waits, faster than an attempt's timeout: the follower asked names N1 again.
        cluster.delayAnswers(Duration.ofMillis(200));

        CompareExchangeResult put = client.put("k", "v", 0);

        assertTrue(put.successful());
        assertEquals(applied + 1, cluster.writesApplied(), "applied once, by N1");
        assertTrue(cluster.writeCalls().stream().anyMatch(c -> !c.address().equals(N1)), "a hedge was sent");
        cluster.delayAnswers(Duration.ZERO);
        int calls = cluster.writeCalls().size();
        client.put("k2", "v", 0);
        assertEquals(List.of(N1), cluster.writeCalls().subList(calls, cluster.writeCalls().size()).stream()
                .map(InProcessCluster.Call::address).toList(), "the client still goes to N1, and only there");
    }

    @Test
    void aSlowAnswerWithinTheTimeoutIsStillTheAnswer() {
        cluster.delayAnswers(Duration.ofMillis(50));

        CompareExchangeResult put = client.put("k", "v", 0);

        assertTrue(put.successful());
        assertEquals(2, cluster.writesApplied(), "no resend");
    }

    @Test
    void aSessionExpiredOnClusterTimeIsReopenedAndTheWriteApplied() {
        client.put("a", 1, 0);
        cluster.advance(ClientOptions.DEFAULT_SESSION_TIMEOUT.plusSeconds(1));

        CompareExchangeResult put = client.put("b", 2, 0);

        assertTrue(put.successful());
        assertEquals(put.index(), cluster.item("b").orElseThrow().index());
        assertEquals(2, cluster.writeCalls().stream().filter(InProcessCluster.Call::opensSession).count(),
                "a second session was opened");
        assertEquals(1, (int) cluster.read(s -> s.sessionCount()), "the first one expired");
    }

    @Test
    void aResendAfterItsSessionExpiredIsInDoubtAndNotAppliedAgain() {
        client.put("warm", 0, 0);
        cluster.dropAnswers(1);
        // Between the first delivery (applied, answer lost) and the resend, the session lapses.
        AtomicBoolean once = new AtomicBoolean();
        cluster.afterWrite(() -> {
            if (once.compareAndSet(false, true)) {
                cluster.advance(ClientOptions.DEFAULT_SESSION_TIMEOUT.plusSeconds(1));
            }
        });

        CompletionException e = assertThrows(CompletionException.class, () -> client.putAsync("k", "v", 0).join());

        assertInstanceOf(UnknownOutcomeException.class, e.getCause(),
                "the resend met an expired session; the first delivery may have applied, so it is not sent in a new one");
        Item applied = cluster.item("k").orElseThrow();
        assertEquals(3, applied.index(), "applied once, by the first delivery (open 1, warm 2, k 3)");
        assertEquals(1, cluster.writeCalls().stream().filter(InProcessCluster.Call::opensSession).count(),
                "no new session was opened to resend it");
    }

    @Test
    void concurrentCreatesOfOneKeyLetExactlyOneWin() {
        RatchetClient other = cluster.client();
        List<CompletableFuture<CompareExchangeResult>> puts = new java.util.ArrayList<>();
        for (int i = 0; i < 40; i++) {
            puts.add((i % 2 == 0 ? client : other).putAsync("race", i, 0));
        }

        List<CompareExchangeResult> results = puts.stream().map(CompletableFuture::join).toList();

        List<CompareExchangeResult> winners = results.stream().filter(CompareExchangeResult::successful).toList();
        assertEquals(1, winners.size());
        String value = cluster.item("race").orElseThrow().value();
        assertEquals(winners.get(0).value(), value);
        assertTrue(results.stream().allMatch(r -> r.value().equals(value)), "every loser was shown the winner");
    }

    @Test
    void aStaleReadIsServedByTheFirstNodeThatAnswersEvenWithoutALeader() {
        client.put("k", "v", 0);
        RatchetClient all = cluster.client();
        cluster.leader(null);
        cluster.down(N1);
        cluster.down(N2);

        StaleRead<Optional<Item>> read = all.getStale("k");

        assertEquals(N3, read.servedBy());
        assertEquals("\"v\"", read.value().orElseThrow().value());
    }

    @Test
    void closingTheClientEndsAPendingWriteInDoubt() {
        client.put("warm", 0, 0);
        cluster.delayAnswers(Duration.ofSeconds(5));
        CompletableFuture<CompareExchangeResult> put = client.putAsync("k", "v", 0);
        await().atMost(Duration.ofSeconds(2)).until(() -> cluster.item("k").isPresent());

        client.close();

        CompletionException e = assertThrows(CompletionException.class,
                () -> put.orTimeout(2, java.util.concurrent.TimeUnit.SECONDS).join());
        assertInstanceOf(UnknownOutcomeException.class, e.getCause(), "it had reached the node");
    }

    /**
     * A watch pending when its client closes should end with {@link ClusterUnavailableException} (what a
     * watch that no node answers ends with). Fails today with a StackOverflowError: once the client is
     * closed, {@link Transport#call} answers every attempt at once, {@link Attempts} gives up at once
     * ({@code transport.closed()}), and {@code watchFrom} re-arms on that ClusterUnavailableException for
     * as long as the watch has time left, recursing synchronously until the stack overflows.
     */
    @Test
    void closingTheClientEndsAPendingWatch() {
        CompareExchangeResult created = client.put("w", "v1", 0);
        CompletableFuture<WatchResult> watch = client.watchAsync("w", created.index(), Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(2)).until(() -> cluster.pendingWatches() == 1);

        client.close();

        CompletionException e = assertThrows(CompletionException.class,
                () -> watch.orTimeout(2, java.util.concurrent.TimeUnit.SECONDS).join());
        assertInstanceOf(ClusterUnavailableException.class, e.getCause(), () -> "got " + e.getCause());
    }

    // ---- bad input never leaves the client

    @Test
    void invalidInputIsRefusedBeforeAnythingIsSent() {
        assertInvalid(() -> client.putAsync("k", null, 0));
        assertInvalid(() -> client.putAsync("", "v", 0));
        assertInvalid(() -> client.putAsync("k", "v", -1));
        assertInvalid(() -> client.putAsync("rvn-atomic/users/1", "v", 0));
        assertInvalid(() -> client.putAsync("k".repeat(600), "v", 0));
        assertInvalid(() -> client.putAsync("k", "v", 0, PutOptions.none().metadata(List.of(1))));
        assertInvalid(() -> client.putAsync("k", "v", 0, PutOptions.none().ttl(Duration.ofMillis(-1))));
        assertInvalid(() -> client.putAsync("k", "v", 0, PutOptions.none().ttl(Duration.ofDays(400))));
        assertInvalid(() -> client.putAsync("k", "v", 2, PutOptions.none().expiredCountsAsAbsent()));
        assertInvalid(() -> client.deleteAsync("k", 0));
        assertInvalid(() -> client.writeAsync(new Command.Check("k", 0)));
        assertInvalid(() -> client.writeAsync(new Command.Put("k", "1", 3, null, 1000, true)));
        assertInvalid(() -> client.writeAsync(new Command.Put("k", "1", 0, null, 0, false), "", Duration.ofMinutes(1)));
        assertInvalid(() -> client.transactionAsync(List.of()));
        assertInvalid(() -> client.transactionAsync(List.of(new Command.Put("k", "1", 0, null), new Command.Delete("K", 4))));
        assertInvalid(() -> client.getAsync(""));
        assertInvalid(() -> client.getStaleAsync(""));
        assertInvalid(() -> client.listAsync("p/", 0, 0));
        assertInvalid(() -> client.getDocumentAsync(""));
        assertInvalid(() -> client.watchAsync("k", 0, Duration.ZERO));
        assertInvalid(() -> client.watchAsync("k", -1, Duration.ofSeconds(1)));
        assertInvalid(() -> client.watchAsync("k", 0, RatchetClient.MAX_WATCH.plusMillis(1)));

        assertEquals(List.of(), cluster.calls(), "the connector saw no call");
    }

    /**
     * An idempotency key with no retention is invalid input like any other, and should be refused as
     * {@link InvalidRequestException} through the future. Fails today: {@code writeAsync} and
     * {@code transactionAsync} call {@code retention.toMillis()} on the null retention and throw a
     * NullPointerException at the caller.
     */
    @Test
    void anIdempotencyKeyWithoutARetentionIsRefusedAsInvalid() {
        assertInvalid(() -> client.writeAsync(new Command.Put("k", "1", 0, null), "key-1", null));
        assertInvalid(() -> client.transactionAsync(List.of(new Command.Put("k", "1", 0, null)), "key-1", null));
        assertEquals(List.of(), cluster.calls());
    }

    @Test
    void anIdempotencyKeyReturnsTheFirstOutcomeToAnotherClient() {
        Command.Put put = new Command.Put("k", "1", 0, null);
        CompareExchangeResult first = client.write(put, "create-k", Duration.ofMinutes(1));

        CompareExchangeResult again = cluster.client().write(put, "create-k", Duration.ofMinutes(1));

        assertTrue(first.successful());
        assertTrue(again.successful(), "the remembered outcome, not a refused create");
        assertEquals(first.index(), again.index());
    }

    @Test
    void aNodeRefusalAsInvalidIsFinalAndNotRetried() {
        // Only a node can tell that this message is not a batches message; the client trusts its codec.
        try (Transport transport = new Transport(List.of(N1), timers -> cluster.connector())) {
            Attempts attempts = new Attempts(transport, InProcessCluster.options(N1));

            CompletionException e = assertThrows(CompletionException.class,
                    () -> attempts.send(Rpc.WRITE_CALL, new byte[] {1, 1, 0, 0, 0, 0}, Duration.ofSeconds(1),
                            Duration.ofSeconds(1)).join());

            assertInstanceOf(InvalidRequestException.class, e.getCause());
            assertEquals(1, cluster.calls().size(), "sent once");
            assertEquals(0, cluster.writesApplied());
        }
    }

    private static void assertInvalid(Supplier<? extends CompletableFuture<?>> call) {
        CompletableFuture<?> future = call.get();
        CompletionException e = assertThrows(CompletionException.class, future::join);
        assertInstanceOf(InvalidRequestException.class, e.getCause(), () -> "got " + e.getCause());
        assertNotNull(e.getCause().getMessage());
    }
}
