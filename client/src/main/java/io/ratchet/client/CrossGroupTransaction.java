package io.ratchet.client;

import io.ratchet.common.Failures;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.Result.TxnState.Record;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * The client as coordinator of one transaction whose keys are in several groups: two-phase commit with
 * the decision in one record (see docs/DESIGN.md, "Transactions across groups").
 *
 * <ol>
 *   <li>Prepare in the primary (the first operation's group), which opens the record; then in every other
 *       group at once. A prepare holds its keys, or writes nothing and answers conflicts or "held".</li>
 *   <li>Commit in the primary: the one entry that decides. A lease that ran out first has aborted it.</li>
 *   <li>Settle every other group (its writes apply at each group's prepare index). The primary's leader
 *       forgets the record later, with others in one entry, once no group holds its intents.</li>
 * </ol>
 *
 * A conflict ends it with the conflicts of every group, nothing written. A key held by another transaction,
 * or a record aborted when its lease ran out, aborts this attempt, which nothing applied, and it begins again
 * with a fresh id after a jittered pause, up to {@link #MAX_ATTEMPTS}. The outcome is unknown only when the
 * commit's own answer is lost and the record cannot be read; a coordinator that stops anywhere leaves the
 * rest to the cluster (its leaders expire, settle and forget).
 */
final class CrossGroupTransaction {
    /** How long a prepared transaction may wait for its decision before the cluster may abort it. */
    static final Duration LEASE = Duration.ofSeconds(Long.getLong("ratchet.txn.leaseSeconds", 5));
    static final int MAX_ATTEMPTS = 8;
    private static final Backoff BACKOFF = new Backoff(Duration.ofMillis(10), Duration.ofMillis(500));
    private static final Backoff FENCE_BACKOFF = new Backoff(Duration.ofMillis(20), Duration.ofMillis(250));

    /** Sends one command to a group's lane; completes with its result as the group answered it. */
    interface Sender {
        CompletableFuture<Result> send(int group, Command command);
    }

    private final Sender sender;
    private final Function<Duration, CompletableFuture<Void>> after;
    private final int groupCount;
    private final List<Command.Op> ops;
    private final Map<Integer, List<Command.Op>> byGroup = new LinkedHashMap<>();
    private final int primary;
    private final List<Integer> groups;

    CrossGroupTransaction(Sender sender, Function<Duration, CompletableFuture<Void>> after, int groupCount,
                          List<Command.Op> ops) {
        this.sender = sender;
        this.after = after;
        this.groupCount = groupCount;
        this.ops = List.copyOf(ops);
        for (Command.Op op : ops) {
            byGroup.computeIfAbsent(Groups.of(op.key(), groupCount), g -> new ArrayList<>()).add(op);
        }
        this.primary = byGroup.keySet().iterator().next();
        this.groups = List.copyOf(new TreeSet<>(byGroup.keySet()));
    }

    /** Whether {@code ops} name keys of more than one of {@code groupCount} groups. */
    static boolean spans(List<Command.Op> ops, int groupCount) {
        return groupCount > 1 && ops.stream().map(op -> Groups.of(op.key(), groupCount)).distinct().count() > 1;
    }

    CompletableFuture<TransactionResult> run() {
        return attempt(1, null);
    }

    /**
     * After a failed step before the commit: aborts (nothing was committed, so nothing applied), then fails
     * with {@code error}; a lost answer becomes "unavailable", since the outcome is known: not applied.
     */
    private <T> CompletableFuture<T> abortedBy(String txn, Throwable error) {
        Throwable cause = Failures.unwrap(error);
        return abort(txn).thenCompose(x -> CompletableFuture.failedFuture(cause instanceof UnknownOutcomeException
                || !(cause instanceof RatchetException)
                ? new ClusterUnavailableException("a transaction across groups " + groups + " was aborted, nothing of it"
                + " applied: a prepare got no answer (" + RatchetClient.describe(cause) + ")", cause) : cause));
    }

    /** Why an attempt ended with nothing applied, to begin again. */
    private record Again(String why) {
    }

    private CompletableFuture<TransactionResult> attempt(int n, String lastWhy) {
        if (n > MAX_ATTEMPTS) {
            return CompletableFuture.failedFuture(new ClusterUnavailableException("a transaction across groups " + groups
                    + " could not be decided in " + MAX_ATTEMPTS + " attempts (" + lastWhy + "); nothing of it applied", null));
        }
        String txn = newId();
        return once(txn).thenCompose(outcome -> {
            if (outcome instanceof TransactionResult done) {
                return CompletableFuture.completedFuture(done);
            }
            Again again = (Again) outcome;
            return after.apply(BACKOFF.delay(n, ThreadLocalRandom.current())).thenCompose(x -> attempt(n + 1, again.why()));
        });
    }

    /** One attempt under {@code txn}: a {@link TransactionResult}, or {@link Again}. */
    private CompletableFuture<Object> once(String txn) {
        return prepare(txn, primary).handle((first, error) -> error == null ? CompletableFuture.completedFuture(first)
                : this.<Result>abortedBy(txn, error)).thenCompose(f -> f).thenCompose(first -> {
            if (!(first instanceof Result.TxnState)) {
                // Nothing is held: a conflict or a held key in the primary leaves no record to end.
                return CompletableFuture.completedFuture(ended(List.of(first)));
            }
            Map<Integer, Long> indexes = new HashMap<>();
            indexes.put(primary, ((Result.TxnState) first).index());
            List<Integer> others = groups.stream().filter(g -> g != primary).toList();
            List<CompletableFuture<Result>> prepared = others.stream().map(g -> prepare(txn, g)).toList();
            return CompletableFuture.allOf(prepared.toArray(CompletableFuture[]::new)).handle((x, error) -> error)
                    .thenCompose(error -> {
                        if (error != null) {
                            // Some group may hold keys, none applied a write: abort, and say what failed.
                            return abortedBy(txn, error);
                        }
                        List<Result> results = prepared.stream().map(CompletableFuture::join).toList();
                        if (!results.stream().allMatch(r -> r instanceof Result.TxnState)) {
                            return abort(txn).thenApply(y -> ended(results));
                        }
                        for (int i = 0; i < others.size(); i++) {
                            indexes.put(others.get(i), ((Result.TxnState) results.get(i)).index());
                        }
                        return commit(txn, indexes);
                    });
        });
    }

    private CompletableFuture<Result> prepare(String txn, int group) {
        Command.Prepare p = new Command.Prepare(txn, primary, groups, LEASE.toMillis(), group == primary, byGroup.get(group));
        return sender.send(group, p).thenApply(RatchetClient::acceptedOrLocked);
    }

    /**
     * The outcome of prepares that did not all hold: conflicts, every group's together (nothing applied);
     * else a held key, to begin again.
     */
    private Object ended(List<Result> results) {
        List<Result.Conflict> conflicts = new ArrayList<>();
        String held = null;
        for (Result r : results) {
            if (r instanceof Result.Txn t) {
                conflicts.addAll(t.conflicts());
            } else if (r instanceof Result.Locked l) {
                held = "key '" + l.key() + "' is held by transaction " + l.txn();
            }
        }
        return conflicts.isEmpty() ? new Again(held) : new TransactionResult(false, 0, conflicts);
    }

    private CompletableFuture<Object> commit(String txn, Map<Integer, Long> indexes) {
        return commit(txn, indexes, 1);
    }

    private CompletableFuture<Object> commit(String txn, Map<Integer, Long> indexes, int tries) {
        return sender.send(primary, new Command.Settle(txn, Command.Settle.Step.COMMIT))
                .handle((result, error) -> error == null ? CompletableFuture.completedFuture(result)
                        : decisionAfterLostAnswer(txn, error))
                .thenCompose(f -> f)
                .thenCompose(result -> {
                    if (result instanceof Result.Fenced) {
                        // A backup is taking its cut: try again shortly. The lease bounds the wait: once it runs
                        // out the cluster aborts the record, and the next try finds it aborted.
                        return after.apply(FENCE_BACKOFF.delay(Math.min(tries, 8), ThreadLocalRandom.current()))
                                .thenCompose(x -> commit(txn, indexes, tries + 1));
                    }
                    Record decided = ((Result.TxnState) RatchetClient.acceptedOrLocked(result)).record();
                    if (decided != Record.COMMITTED) {
                        // Its lease ran out before the commit and the cluster aborted it: nothing applied.
                        return abort(txn).thenApply(x -> new Again("its lease of " + LEASE.toMillis() + " ms ran out"));
                    }
                    List<CompletableFuture<Result>> settled = groups.stream().filter(g -> g != primary)
                            .map(g -> sender.send(g, new Command.Settle(txn, Command.Settle.Step.COMMIT))).toList();
                    // The outcome is decided: a settle that fails here is the cluster's to finish (and reads wait for it).
                    // The record is the primary's leader's to forget, in batches, once no group holds its intents.
                    return CompletableFuture.allOf(settled.toArray(CompletableFuture[]::new))
                            .handle((x, e) -> (Object) success(indexes));
                });
    }

    /** After the commit's answer was lost: the record tells, if it can be read; else the outcome is unknown. */
    private CompletableFuture<Result> decisionAfterLostAnswer(String txn, Throwable error) {
        Throwable cause = Failures.unwrap(error);
        if (cause instanceof InvalidRequestException || cause instanceof PermissionDeniedException) {
            return CompletableFuture.failedFuture(cause);
        }
        // Settling is idempotent: asking to commit again answers with the decision, whichever it was.
        return sender.send(primary, new Command.Settle(txn, Command.Settle.Step.COMMIT)).exceptionallyCompose(again ->
                CompletableFuture.failedFuture(new UnknownOutcomeException("the commit of transaction " + txn + " across groups "
                        + groups + " got no answer (" + RatchetClient.describe(cause) + "), nor did the question of its"
                        + " record; the cluster settles it either way", cause)));
    }

    /**
     * Aborts {@code txn} in the primary, then releases every other group; a step that fails is left to the
     * cluster's recovery, and so is forgetting the record.
     */
    private CompletableFuture<Void> abort(String txn) {
        return sender.send(primary, new Command.Settle(txn, Command.Settle.Step.ABORT)).handle((r, e) -> {
            List<CompletableFuture<Result>> released = groups.stream().filter(g -> g != primary)
                    .map(g -> sender.send(g, new Command.Settle(txn, Command.Settle.Step.ABORT))).toList();
            // Awaited, so that an attempt that follows does not find this one's intents in its way.
            return CompletableFuture.allOf(released.toArray(CompletableFuture[]::new)).handle((x, failed) -> (Void) null);
        }).thenCompose(f -> f);
    }

    private TransactionResult success(Map<Integer, Long> indexes) {
        Map<String, Long> byKey = new HashMap<>();
        for (Command.Op op : ops) {
            if (op.opKind() != Command.Op.Kind.CHECK) {
                byKey.put(Keys.normalize(op.key()), indexes.get(Groups.of(op.key(), groupCount)));
            }
        }
        return new TransactionResult(true, indexes.get(primary), List.of(), byKey);
    }

    private static String newId() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return Long.toHexString(r.nextLong() | Long.MIN_VALUE) + Long.toHexString(r.nextLong() | Long.MIN_VALUE);
    }
}
