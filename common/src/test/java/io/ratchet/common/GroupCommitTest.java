package io.ratchet.common;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Group commit without a cluster: a transport that records each message and is answered by hand. */
class GroupCommitTest {

    /** Records every message sent and lets the test answer them, as the node would, one by one. */
    private static final class RecordingTransport implements GroupCommit.Transport {
        // A hold's timer sends from its own thread.
        final List<List<Request>> messages = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<List<Result>>> answers = new CopyOnWriteArrayList<>();

        @Override
        public CompletableFuture<List<Result>> send(byte[] message) {
            messages.add(Codec.decodeRequests(message));
            CompletableFuture<List<Result>> answer = new CompletableFuture<>();
            answers.add(answer);
            return answer;
        }

        /** Answers message {@code i} like a node that accepts every write: one result per command. */
        void acceptAll(int i) {
            List<Result> results = new ArrayList<>();
            long index = 100 + i;
            for (Request r : messages.get(i)) {
                for (Command c : r.commands()) {
                    String key = ((Command.Put) c).key();
                    results.add(new Result.Write(true, key, new Item(key, "1", index, index, 0, null)));
                }
            }
            answers.get(i).complete(results);
        }
    }

    private static final GroupCommit.Hold NO_HOLD = GroupCommit.Hold.NONE;
    /** A value of nearly 1 MiB: three are over the 3 MiB a node accepts in one message. */
    private static final String BIG = "\"" + "x".repeat(Limits.MAX_VALUE_BYTES - 16) + "\"";
    private static final long MILLI = TimeUnit.MILLISECONDS.toNanos(1);
    /** A client's hold as tests run it: a quarter of a round, at most 1 ms. */
    private static final GroupCommit.Hold QUARTER_MILLI = new GroupCommit.Hold(MILLI, 4);

    private static Request put(String key) {
        return Request.of(List.of(new Command.Put(key, "1", 0, null)));
    }

    @Test
    void aLoneRequestIsSentAtOnceOnItsOwn() {
        RecordingTransport transport = new RecordingTransport();
        GroupCommit<Request> commit = new GroupCommit<>(GroupCommit.WRITES, transport, 1, NO_HOLD);

        CompletableFuture<List<Result>> result = commit.submit(put("a"));

        assertEquals(List.of(List.of(put("a"))), transport.messages);
        transport.acceptAll(0);
        assertEquals("a", ((Result.Write) result.join().get(0)).key());
    }

    @Test
    void requestsThatQueueWhileOneIsInFlightShareTheNextMessageInOrder() {
        RecordingTransport transport = new RecordingTransport();
        GroupCommit<Request> commit = new GroupCommit<>(GroupCommit.WRITES, transport, 1, NO_HOLD);
        CompletableFuture<List<Result>> first = commit.submit(put("first"));
        List<CompletableFuture<List<Result>>> queued = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            queued.add(commit.submit(put("q" + i)));
        }
        assertEquals(1, transport.messages.size(), "nothing more is sent while the slot is taken");

        transport.acceptAll(0);

        assertTrue(first.isDone());
        assertEquals(2, transport.messages.size());
        assertEquals(List.of(put("q0"), put("q1"), put("q2"), put("q3"), put("q4")), transport.messages.get(1));
        transport.acceptAll(1);
        for (int i = 0; i < 5; i++) {
            Result.Write w = (Result.Write) queued.get(i).join().get(0);
            assertEquals("q" + i, w.key(), "each request gets its own result");
            assertEquals(101, w.index(), "all of them were applied in the second entry");
        }
    }

    @Test
    void aMemberWithdrawnAsItsMessageLeavesIsNotSentAndTheOthersGoInOrder() {
        RecordingTransport transport = new RecordingTransport();
        // What the front end does with a write whose index the entry before it replaced.
        Set<String> stale = ConcurrentHashMap.newKeySet();
        GroupCommit<Request> commit = new GroupCommit<>(GroupCommit.WRITES, transport, 1, NO_HOLD,
                r -> !stale.contains(((Command.Put) r.commands().get(0)).key()));
        CompletableFuture<List<Result>> first = commit.submit(put("first"));
        CompletableFuture<List<Result>> a = commit.submit(put("a"));
        CompletableFuture<List<Result>> loser = commit.submit(put("loser"));
        CompletableFuture<List<Result>> b = commit.submit(put("b"));
        stale.add("loser"); // decided while it waited, not when it was queued

        transport.acceptAll(0);

        assertEquals(List.of(put("a"), put("b")), transport.messages.get(1));
        ExecutionException withdrawn = assertThrows(ExecutionException.class, loser::get);
        assertInstanceOf(GroupCommit.Withdrawn.class, withdrawn.getCause());
        transport.acceptAll(1);
        assertEquals(List.of(101L, 101L), List.of(((Result.Write) a.join().get(0)).index(), ((Result.Write) b.join().get(0)).index()),
                "each of the others gets its own result");
        assertTrue(first.isDone());

        // A message whose every member is withdrawn is not sent; the slot goes to what is queued next.
        stale.add("c");
        commit.submit(put("blocker"));
        CompletableFuture<List<Result>> c = commit.submit(put("c"));
        transport.acceptAll(2);
        assertTrue(c.isCompletedExceptionally());
        CompletableFuture<List<Result>> d = commit.submit(put("d"));
        assertEquals(List.of(put("d")), transport.messages.get(3), "sent at once: the slot is free");
        transport.acceptAll(3);
        assertEquals("d", ((Result.Write) d.join().get(0)).key());
    }

    @Test
    void resultsAreSplitByEachRequestsCommandCount() {
        RecordingTransport transport = new RecordingTransport();
        GroupCommit<Request> commit = new GroupCommit<>(GroupCommit.WRITES, transport, 1, NO_HOLD);
        commit.submit(put("blocker"));
        Request three = Request.of(List.of(new Command.Put("x", "1", 0, null), new Command.Put("y", "1", 0, null),
                new Command.Put("z", "1", 0, null)));
        CompletableFuture<List<Result>> many = commit.submit(three);
        CompletableFuture<List<Result>> one = commit.submit(put("w"));
        transport.acceptAll(0);
        transport.acceptAll(1);

        assertEquals(List.of("x", "y", "z"), many.join().stream().map(r -> ((Result.Write) r).key()).toList());
        assertEquals(List.of("w"), one.join().stream().map(r -> ((Result.Write) r).key()).toList());
    }

    @Test
    void whenAMessageFailsEveryRequestInItFailsWithThatError() {
        RecordingTransport transport = new RecordingTransport();
        GroupCommit<Request> commit = new GroupCommit<>(GroupCommit.WRITES, transport, 1, NO_HOLD);
        CompletableFuture<List<Result>> first = commit.submit(put("first"));
        CompletableFuture<List<Result>> a = commit.submit(put("a"));
        CompletableFuture<List<Result>> b = commit.submit(put("b"));
        transport.acceptAll(0);

        IllegalStateException lost = new IllegalStateException("the write got no answer");
        transport.answers.get(1).completeExceptionally(lost);

        assertTrue(first.isDone() && !first.isCompletedExceptionally(), "an earlier message is not affected");
        assertSame(lost, cause(a));
        assertSame(lost, cause(b));
    }

    @Test
    void aMessageNeverExceedsTheRequestSizeLimit() {
        RecordingTransport transport = new RecordingTransport();
        GroupCommit<Request> commit = new GroupCommit<>(GroupCommit.WRITES, transport, 1, NO_HOLD);
        commit.submit(put("blocker"));
        // Three values of ~1 MiB each: together they are over the 3 MiB a node accepts in one message.
        for (int i = 0; i < 3; i++) {
            commit.submit(Request.of(List.of(new Command.Put("big" + i, BIG, 0, null))));
        }
        transport.acceptAll(0);
        transport.acceptAll(1);

        assertEquals(3, transport.messages.size());
        assertEquals(2, transport.messages.get(1).size());
        assertEquals(1, transport.messages.get(2).size());
    }

    @Test
    void aRequestTooLargeForAnyMessageIsRefusedAloneAndNeverJoinsABatch() {
        RecordingTransport transport = new RecordingTransport();
        GroupCommit<Request> commit = new GroupCommit<>(GroupCommit.WRITES, transport, 1, NO_HOLD);
        commit.submit(put("blocker"));
        List<Command> commands = List.of(new Command.Put("a", BIG, 0, null), new Command.Put("b", BIG, 0, null),
                new Command.Put("c", BIG, 0, null));
        CompletableFuture<List<Result>> tooBig = commit.submit(Request.of(commands));
        CompletableFuture<List<Result>> fine = commit.submit(put("fine"));
        transport.acceptAll(0);
        transport.acceptAll(1);

        assertInstanceOf(InvalidCommandException.class, cause(tooBig));
        assertEquals(List.of(put("fine")), transport.messages.get(1));
        assertEquals("fine", ((Result.Write) fine.join().get(0)).key());
    }

    @Test
    void withTwoSlotsASecondMessageGoesOutBeforeTheFirstIsAnswered() {
        RecordingTransport transport = new RecordingTransport();
        GroupCommit<Request> commit = new GroupCommit<>(GroupCommit.WRITES, transport, 2, NO_HOLD);
        commit.submit(put("a"));
        commit.submit(put("b"));
        commit.submit(put("c"));
        commit.submit(put("d"));

        assertEquals(List.of(List.of(put("a")), List.of(put("b"))), transport.messages);
        transport.acceptAll(0);
        assertEquals(List.of(put("c"), put("d")), transport.messages.get(2));
    }

    /** A group commit on a hand-driven clock whose last answered message carried three requests. */
    private record AfterThree(RecordingTransport transport, AtomicLong clock, GroupCommit<Request> commit) {
    }

    /**
     * Sends a lone request, then three behind it, and answers both messages, each after a 40 ms round
     * on the clock: the three callers of the second message are then expected back.
     */
    private static AfterThree afterAMessageOfThree(GroupCommit.Hold hold) {
        RecordingTransport transport = new RecordingTransport();
        AtomicLong clock = new AtomicLong();
        GroupCommit<Request> commit = new GroupCommit<>(GroupCommit.WRITES, transport, 1, hold, m -> true, clock::get);
        commit.submit(put("blocker"));
        commit.submit(put("a"));
        commit.submit(put("b"));
        commit.submit(put("c"));
        clock.addAndGet(40 * MILLI);
        transport.acceptAll(0);
        assertEquals(List.of(put("a"), put("b"), put("c")), transport.messages.get(1), "after a message of one nothing waits");
        clock.addAndGet(40 * MILLI);
        transport.acceptAll(1);
        return new AfterThree(transport, clock, commit);
    }

    @Test
    void afterAMessageOfSeveralIsAnsweredTheNextWaitsUntilAsManyRequestsAreQueued() {
        AfterThree run = afterAMessageOfThree(QUARTER_MILLI);

        run.commit().submit(put("x"));
        run.commit().submit(put("y"));
        assertEquals(2, run.transport().messages.size(), "the first two callers back wait for the third");
        run.commit().submit(put("z"));

        assertEquals(List.of(put("x"), put("y"), put("z")), run.transport().messages.get(2),
                "the third fills the hold and all go together");
    }

    @Test
    void aHoldThatIsNotFilledEndsByItselfAndSendsWhatCame() {
        AfterThree run = afterAMessageOfThree(QUARTER_MILLI);

        CompletableFuture<List<Result>> alone = run.commit().submit(put("x"));
        assertEquals(2, run.transport().messages.size(), "held while the hold lasts");
        run.clock().addAndGet(MILLI); // the hold: a quarter of the 40 ms round, capped at 1 ms

        await().atMost(Duration.ofSeconds(10)).until(() -> run.transport().messages.size() == 3);
        assertEquals(List.of(put("x")), run.transport().messages.get(2));
        run.transport().acceptAll(2);
        assertEquals("x", ((Result.Write) alone.join().get(0)).key());
    }

    @Test
    void aWholeRoundHoldWaitsTheLastRoundOutAndNoLonger() {
        AfterThree run = afterAMessageOfThree(new GroupCommit.Hold(100 * MILLI, 1));

        run.commit().submit(put("x"));
        run.clock().addAndGet(39 * MILLI);
        run.commit().submit(put("y")); // looks at the clock: 39 ms into a 40 ms hold
        assertEquals(2, run.transport().messages.size(), "held for up to the 40 ms round, not a quarter of it");
        run.clock().addAndGet(MILLI);

        await().atMost(Duration.ofSeconds(10)).until(() -> run.transport().messages.size() == 3);
        assertEquals(List.of(put("x"), put("y")), run.transport().messages.get(2));
    }

    @Test
    void afterAHoldRanOutTheNextIsAQuarterAsLong() {
        AfterThree run = afterAMessageOfThree(new GroupCommit.Hold(100 * MILLI, 1));
        run.commit().submit(put("x"));
        run.clock().addAndGet(40 * MILLI); // nobody else came back: the hold runs out
        await().atMost(Duration.ofSeconds(10)).until(() -> run.transport().messages.size() == 3);
        run.commit().submit(put("p"));
        run.commit().submit(put("q"));
        run.commit().submit(put("r"));
        run.clock().addAndGet(40 * MILLI);
        run.transport().acceptAll(2); // x alone: no hold, so p, q and r leave at once
        assertEquals(List.of(put("p"), put("q"), put("r")), run.transport().messages.get(3));
        run.clock().addAndGet(40 * MILLI);
        run.transport().acceptAll(3);

        run.commit().submit(put("s"));
        run.clock().addAndGet(9 * MILLI);
        run.commit().submit(put("t"));
        assertEquals(4, run.transport().messages.size(), "held for a quarter of the 40 ms round");
        run.clock().addAndGet(MILLI);
        await().atMost(Duration.ofSeconds(10)).until(() -> run.transport().messages.size() == 5);
        assertEquals(List.of(put("s"), put("t")), run.transport().messages.get(4));
    }

    @Test
    void aHoldIsAShareOfARoundCapped() {
        assertEquals(10 * MILLI, new GroupCommit.Hold(10 * MILLI, 1).nanos(40 * MILLI));
        assertEquals(10 * MILLI, new GroupCommit.Hold(20 * MILLI, 4).nanos(40 * MILLI));
        assertEquals(MILLI, new GroupCommit.Hold(MILLI, 4).nanos(40 * MILLI));
        assertThrows(IllegalArgumentException.class, () -> new GroupCommit.Hold(MILLI, 0));
        assertThrows(IllegalArgumentException.class, () -> new GroupCommit.Hold(-1, 1));
    }

    @Test
    void withoutHoldsTheFirstCallerBackIsSentAtOnce() {
        AfterThree run = afterAMessageOfThree(NO_HOLD);

        run.commit().submit(put("x"));

        assertEquals(List.of(put("x")), run.transport().messages.get(2));
    }

    /**
     * Ratis completes a reply while it holds its client's lock, and its send takes that lock too. A
     * sender must not hold the group-commit lock while it waits for Ratis, or the two deadlock.
     */
    @Test
    void aReplyCompletedUnderTheTransportsLockDoesNotDeadlockASenderWaitingForThatLock() throws Exception {
        Object ratisLock = new Object();
        RecordingTransport recording = new RecordingTransport();
        GroupCommit.Transport transport = message -> {
            synchronized (ratisLock) {
                return recording.send(message);
            }
        };
        GroupCommit<Request> commit = new GroupCommit<>(GroupCommit.WRITES, transport, 2, NO_HOLD);
        CompletableFuture<List<Result>> first = commit.submit(put("first"));

        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            Thread sender;
            synchronized (ratisLock) {
                sender = new Thread(() -> commit.submit(put("second")));
                sender.start();
                await().atMost(Duration.ofSeconds(10)).until(() -> sender.getState() == Thread.State.BLOCKED);
                recording.acceptAll(0);
            }
            sender.join();
        });
        assertTrue(first.isDone());
        assertEquals(List.of(put("second")), recording.messages.get(1));
    }

    private static Throwable cause(CompletableFuture<?> f) {
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException | TimeoutException e) {
            throw new AssertionError("the request was never completed", e);
        }
        throw new AssertionError("expected a failure, got " + f.join());
    }
}
