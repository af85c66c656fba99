package io.ratchet.client;

import io.ratchet.client.internal.Attempts;
import io.ratchet.client.internal.ClientSession;
import io.ratchet.client.internal.GrpcConnector;
import io.ratchet.client.internal.Transport;
import io.ratchet.common.Failures;
import io.ratchet.common.GroupCommit;
import io.ratchet.common.GrpcLogging;
import io.ratchet.protocol.AuthTable;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.JsonText;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.Rpc;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A connection to a Ratchet cluster. Thread-safe; share one per process.
 *
 * <p>Every method has an asynchronous form returning a {@link CompletableFuture} and a blocking form
 * that waits for it. The asynchronous forms' futures complete on a thread of the client's own, never on
 * its network threads, so a continuation may block, even on another call of this client. Writes one
 * client sends are applied in the order it sent them, each exactly once
 * however often it had to be resent (the client's session). Reads are linearizable unless the method
 * says stale.
 *
 * <p>Errors: {@link InvalidRequestException} (nothing written, do not retry unchanged),
 * {@link UnknownOutcomeException} (a write got no answer: it may have been applied),
 * {@link ClusterUnavailableException} (no node served the call; a write was not applied). Every retry is
 * bounded by {@link ClientOptions#maxAttempts()} and {@link ClientOptions#operationTimeout()}.
 *
 * <p>The parts: {@link Transport} holds the connections to the nodes' front ends,
 * {@link Attempts} the retry rules, {@link ClientSession} exactly-once writes, and two
 * {@link GroupCommit}s join what this process's threads send at once into one message.
 */
public final class RatchetClient implements AutoCloseable {
    private final ClientOptions options;
    /** Group 0's transport, which holds the connections every group's calls share. */
    private final Transport transport;
    /** Status calls; its channels open on the first and close with the client. */
    private final ClusterAdmin admin;
    /** The way to group 0: there from the start, since the cluster's shape is asked there. */
    private final Lane first;
    /** One lane per group, in group order, once the cluster's shape is known; null before. */
    private volatile List<Lane> lanes;
    /** The shape question in flight, or answered; a failed one is asked again by the next call. */
    private CompletableFuture<List<Lane>> shaping;
    /**
     * Calls made before the cluster's shape was known, in the order they were made ({@link #whenShaped}):
     * the shape's answer starts them in that order before it publishes {@link #lanes}, so that no later
     * call overtakes them. Guarded by itself.
     */
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();

    /** A call waiting for the shape: what starts it on the lanes, and what fails it when no shape comes. */
    private record Waiting(Consumer<List<Lane>> start, Consumer<Throwable> fail) {
    }

    private final Metrics metrics = new Metrics();
    private final ClientEvents events = new ClientEvents();
    /**
     * Where the futures of the asynchronous forms complete ({@link #handOff}). Answers arrive on the network
     * threads, which complete the client's own stages and wake a blocking caller directly: a continuation of
     * the caller's that blocks there would stall every answer behind it, and one that waits for another call
     * of this client would wait forever for an answer its own thread must read.
     */
    private final ExecutorService callbacks = Executors.newCachedThreadPool(DaemonThreads.named("ratchet-client-callbacks"));

    /**
     * The client's way to one Raft group ({@link Groups}): who it believes leads the group, the retry
     * rules, a client session of the group's own, and the two group commits. A cluster of one group has
     * one lane, and the client is what it was before groups.
     */
    private final class Lane {
        final Transport transport;
        final Attempts attempts;
        /**
         * One write message in flight, always: the session tells a resend from a new message by its
         * sequence number, which needs each message answered before the next is sent. (Measured best
         * anyway: docs/PERFORMANCE.md.)
         */
        final GroupCommit<Request> writes;
        /**
         * Gets that queue up share one read message; the leader's front end joins them with other clients'
         * under one ReadIndex. {@code ratchet.getBatch.inFlight} overrides the one in flight for measurements.
         */
        final GroupCommit<Query.Get> gets;

        Lane(Transport transport) {
            this.transport = transport;
            this.attempts = new Attempts(transport, options);
            ClientSession session = new ClientSession(attempts, options);
            this.writes = new GroupCommit<>(GroupCommit.WRITES, session::send, 1, GroupCommit.QUARTER_ROUND);
            this.gets = new GroupCommit<>(GroupCommit.GETS,
                    gets -> sendRead(this, gets, options.operationTimeout(), options.requestTimeout(), "read"),
                    Integer.getInteger("ratchet.getBatch.inFlight", 1), GroupCommit.QUARTER_ROUND);
        }
    }

    static {
        GrpcLogging.quiet();
    }

    /** The longest a single watch may wait: {@link Limits#MAX_WATCH_SECONDS}. */
    public static final Duration MAX_WATCH = Duration.ofSeconds(Limits.MAX_WATCH_SECONDS);
    /**
     * How long past its timeout a watch may take to answer: the time to reach a node again after a
     * leader change (or, at worst, to give up). A watch, and a lock acquire that waits, end by then.
     */
    public static final Duration WATCH_SLACK = Duration.ofSeconds(1);
    /** The longest one node holds a watch before the client arms it again: how soon a silent node is left. */
    static final Duration WATCH_SLICE = Duration.ofSeconds(2);

    private RatchetClient(ClientOptions options, Function<ScheduledExecutorService, Transport.Connector> connector) {
        this.options = options;
        this.transport = new Transport(List.copyOf(options.peers().values()), connector, events);
        this.admin = ClusterAdmin.connect(options);
        this.first = new Lane(transport);
    }

    // ---- the cluster's groups

    /**
     * Every group's lane: the cluster's shape ({@link Query.Shape}) is asked once, on the first call that
     * needs it, and each group's lane starts at the leader the answering node named. A node of a release
     * before groups refuses the question as unknown: its cluster has one group.
     */
    private CompletableFuture<List<Lane>> lanes() {
        List<Lane> known = lanes;
        if (known != null) {
            return CompletableFuture.completedFuture(known);
        }
        synchronized (this) {
            if (shaping == null || shaping.isCompletedExceptionally()) {
                shaping = askShape();
            }
            return shaping;
        }
    }

    private CompletableFuture<List<Lane>> askShape() {
        return sendRead(first, Codec.encodeQuery(new Query.Shape()), options.operationTimeout(), options.requestTimeout(),
                "question of the cluster's groups").handle((results, error) -> {
                    List<Lane> all;
                    if (error == null) {
                        List<String> leaders = ((Result.Shape) accepted(results.get(0))).leaders();
                        all = new ArrayList<>(leaders.size());
                        for (int g = 0; g < leaders.size(); g++) {
                            all.add(g == 0 ? first : new Lane(transport.forGroup(g, leaders.get(g))));
                        }
                        if (!leaders.get(0).isEmpty()) {
                            transport.follow(leaders.get(0));
                        }
                    } else if (Failures.unwrap(error) instanceof InvalidRequestException) {
                        all = List.of(first);
                    } else {
                        Throwable cause = Failures.unwrap(error);
                        synchronized (this) {
                            shaping = null; // the next call asks again, also one that waits from now on
                        }
                        startWaiting(null, cause);
                        throw new CompletionException(cause);
                    }
                    List<Lane> known = List.copyOf(all);
                    startWaiting(known, null);
                    return known;
                });
    }

    /**
     * Starts the calls that waited for the shape, in the order they were made, then publishes the lanes
     * ({@code all}; null with the {@code error} that failed the question, which fails them all).
     */
    private void startWaiting(List<Lane> all, Throwable error) {
        synchronized (waiting) {
            while (!waiting.isEmpty()) {
                Waiting w = waiting.poll();
                if (all == null) {
                    w.fail().accept(error);
                } else {
                    w.start().accept(all);
                }
            }
            if (all != null) {
                lanes = all;
            }
        }
    }

    /**
     * {@code call} on every group's lane: at once when the cluster's shape is known (every call but a
     * client's first ones), else once it is, in the order the calls were made. Left to the shape future's
     * dependents, the waiting calls started in no set order, and a call made while the answer was being
     * handled saw the lanes and overtook them all: a write sent later applied one log entry earlier
     * (GroupCommitClusterTest).
     */
    private <T> CompletableFuture<T> whenShaped(Function<List<Lane>, CompletableFuture<T>> call) {
        List<Lane> known = lanes;
        if (known != null) {
            return call.apply(known);
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        synchronized (waiting) {
            known = lanes;
            if (known == null) {
                waiting.add(new Waiting(ls -> {
                    try {
                        call.apply(ls).whenComplete((value, error) -> complete(result, value, error));
                    } catch (RuntimeException e) {
                        result.completeExceptionally(e);
                    }
                }, result::completeExceptionally));
            }
        }
        if (known != null) {
            return call.apply(known);
        }
        lanes(); // asks the shape, unless it is being asked
        return result;
    }

    /**
     * {@code call} on the lane of the group that holds {@code key}: at once when the cluster's shape is
     * known (every call but a client's first), else once it is.
     */
    private <T> CompletableFuture<T> onLaneOf(String key, Function<Lane, CompletableFuture<T>> call) {
        return whenShaped(all -> call.apply(all.get(Groups.of(key, all.size()))));
    }

    /** How many groups the cluster has (asked of it on first use). */
    public int groups() {
        return await(lanes()).size();
    }

    /** Connects to {@code host:port,host:port,...} (or {@code id=host:port,...}) with default options. */
    public static RatchetClient connect(String peers) {
        return connect(ClientOptions.parse(peers));
    }

    public static RatchetClient connect(ClientOptions options) {
        return new RatchetClient(options, timers -> new GrpcConnector(options.credentials()));
    }

    /**
     * A client whose calls go through {@code connector} instead of gRPC: the seam {@code ratchet-testing}'s
     * {@code InProcessCluster} uses. Not for applications: {@link Transport.Connector} is internal and may
     * change in any release.
     */
    public static RatchetClient connect(ClientOptions options, Function<ScheduledExecutorService, Transport.Connector> connector) {
        return new RatchetClient(options, connector);
    }

    public ClientOptions options() {
        return options;
    }

    /** Per-key attempt, commit and conflict counters of the retry loops run over this client. */
    public Metrics metrics() {
        return metrics;
    }

    /**
     * This client's operations, resends, leader changes, hedges, sessions and held locks as they happen;
     * {@code io.ratchet.client.micrometer.RatchetClientMetrics} makes Micrometer meters of them.
     */
    public ClientEvents events() {
        return events;
    }

    // ---- writes

    /**
     * Stores {@code value} under {@code key} if {@code index} is 0 and the key is absent (create-only),
     * or if {@code index} equals the item's current index. {@code value} is any object Jackson can
     * write (a {@code JsonNode}, a record, a string, a number, ...) but null; JSON text you hold already
     * goes in a {@link JsonText}, so a string is never silently taken for JSON.
     */
    public CompletableFuture<CompareExchangeResult> putAsync(String key, Object value, long index) {
        return handOff(put0(key, value, index));
    }

    private CompletableFuture<CompareExchangeResult> put0(String key, Object value, long index) {
        return put0(key, value, index, PutOptions.none());
    }

    /** As {@link #putAsync(String, Object, long)}, with an expiry, metadata or "expired counts as absent". */
    public CompletableFuture<CompareExchangeResult> putAsync(String key, Object value, long index, PutOptions options) {
        return handOff(put0(key, value, index, options));
    }

    private CompletableFuture<CompareExchangeResult> put0(String key, Object value, long index, PutOptions options) {
        Command.Put put;
        try {
            put = options.toCommand(key, toJson("value", value), index);
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return write0(put);
    }

    /** Removes {@code key} if {@code index} equals its current index. */
    public CompletableFuture<CompareExchangeResult> deleteAsync(String key, long index) {
        return handOff(delete0(key, index));
    }

    private CompletableFuture<CompareExchangeResult> delete0(String key, long index) {
        return write0(new Command.Delete(key, index));
    }

    /** Sends one put or delete of the protocol as it is (a {@link Command.Put} already carries its options). */
    public CompletableFuture<CompareExchangeResult> writeAsync(Command.Op write) {
        return handOff(write0(write));
    }

    private CompletableFuture<CompareExchangeResult> write0(Command.Op write) {
        return write0(write, null, null);
    }

    /**
     * As {@link #writeAsync(Command.Op)}, with an idempotency key (null for none): within
     * {@code retention} a resend of the same key, even from another client after a lost answer, returns
     * the first outcome instead of applying again. A key names one write; use a fresh one for the next.
     */
    public CompletableFuture<CompareExchangeResult> writeAsync(Command.Op write, String idempotencyKey, Duration retention) {
        return handOff(write0(write, idempotencyKey, retention));
    }

    private CompletableFuture<CompareExchangeResult> write0(Command.Op write, String idempotencyKey, Duration retention) {
        boolean standsAlone = switch (write.opKind()) {
            case PUT, DELETE -> true;
            case CHECK, PUT_DOCUMENT, DELETE_DOCUMENT -> false;
        };
        if (!standsAlone) {
            return CompletableFuture.failedFuture(invalid(new InvalidCommandException(
                    "only a put or a delete stands alone; other operations go in a transaction")));
        }
        if (idempotencyKey != null && retention == null) {
            return CompletableFuture.failedFuture(noRetention());
        }
        Request request = new Request(idempotencyKey, idempotencyKey == null ? 0 : retention.toMillis(), List.of((Command) write));
        return events.timed(write.opKind() == Command.Op.Kind.PUT ? "put" : "delete",
                submit(request).thenApply(results -> toWriteResult(results.get(0))), RatchetClient::outcomeOf);
    }

    /**
     * Adds {@code delta} to the JSON integer under {@code key}, with no condition: adds to one key from any
     * number of callers never conflict, so a hot counter needs no retry loop. An absent key (or an expired
     * item) counts as 0 and is created. The item's metadata and expiry stay as they are.
     *
     * <p>Integers are signed 64-bit: {@link NotAnIntegerException} when the item holds anything else (a
     * string, an object, {@code 1.5}), {@link AddOverflowException} when the sum would leave the range; both
     * wrote nothing. {@link UnsupportedCommandException} while a member of the cluster runs a release without
     * add (a rolling upgrade). Like any write, an add whose answer was lost ends in {@link
     * UnknownOutcomeException}; resent blindly it could apply twice, so send one that must count once with an
     * idempotency key ({@link #addAsync(String, long, String, Duration)}).
     */
    public CompletableFuture<AddResult> addAsync(String key, long delta) {
        return handOff(add0(key, delta));
    }

    private CompletableFuture<AddResult> add0(String key, long delta) {
        return add0(key, delta, null, null);
    }

    /**
     * As {@link #addAsync(String, long)}, with an idempotency key (null for none): within {@code retention}
     * a resend of the same key, even from another client after a lost answer, returns the first outcome
     * instead of adding again. A key names one add; use a fresh one for the next.
     */
    public CompletableFuture<AddResult> addAsync(String key, long delta, String idempotencyKey, Duration retention) {
        return handOff(add0(key, delta, idempotencyKey, retention));
    }

    private CompletableFuture<AddResult> add0(String key, long delta, String idempotencyKey, Duration retention) {
        if (idempotencyKey != null && retention == null) {
            return CompletableFuture.failedFuture(noRetention());
        }
        Request request = new Request(idempotencyKey, idempotencyKey == null ? 0 : retention.toMillis(),
                List.of(new Command.Add(key, delta)));
        return events.timed("add", submit(request).thenApply(results -> {
            Result.Write w = (Result.Write) accepted(results.get(0));
            return new AddResult(w.key(), Command.Add.integerOf(w.item().value()), w.item().index());
        }), added -> ClientEvents.APPLIED);
    }

    public AddResult add(String key, long delta) {
        return await(add0(key, delta));
    }

    public AddResult add(String key, long delta, String idempotencyKey, Duration retention) {
        return await(add0(key, delta, idempotencyKey, retention));
    }

    /**
     * Applies every operation or none, in one log entry: all conditions are checked first, then all
     * writes land at one index. A failed condition is a normal result listing every conflict.
     */
    public CompletableFuture<TransactionResult> transactionAsync(List<Command.Op> ops) {
        return handOff(transaction0(ops));
    }

    private CompletableFuture<TransactionResult> transaction0(List<Command.Op> ops) {
        return transaction0(ops, null, null);
    }

    /**
     * As {@link #transactionAsync(List)}, with an idempotency key: within {@code retention} a resend
     * of the same key, even from another client after a lost answer, returns the first outcome
     * instead of applying again.
     */
    public CompletableFuture<TransactionResult> transactionAsync(List<Command.Op> ops, String idempotencyKey,
                                                                 Duration retention) {
        return handOff(transaction0(ops, idempotencyKey, retention));
    }

    private CompletableFuture<TransactionResult> transaction0(List<Command.Op> ops, String idempotencyKey,
                                                                 Duration retention) {
        return events.timed("transaction", transact(ops, idempotencyKey, retention),
                t -> t.successful() ? ClientEvents.APPLIED : CONDITION_FAILED);
    }

    private CompletableFuture<TransactionResult> transact(List<Command.Op> ops, String idempotencyKey, Duration retention) {
        if (idempotencyKey != null && retention == null) {
            return CompletableFuture.failedFuture(noRetention());
        }
        Request request = new Request(idempotencyKey, idempotencyKey == null ? 0 : retention.toMillis(),
                List.of(new Command.Transaction(ops)));
        try {
            request.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return whenShaped(known -> transactOn(known, ops, idempotencyKey, retention, request));
    }

    private CompletableFuture<TransactionResult> transactOn(List<Lane> known, List<Command.Op> ops, String idempotencyKey,
                                                           Duration retention, Request request) {
        if (CrossGroupTransaction.spans(ops, known.size())) {
            if (idempotencyKey != null) {
                return CompletableFuture.failedFuture(invalid(new InvalidCommandException("an idempotency key on a"
                        + " transaction across groups is not supported yet: give its keys one hash tag, as in user:{42} and"
                        + " email:{42}, so that they share a group")));
            }
            return new CrossGroupTransaction((g, command) -> send(known.get(g), Request.of(List.of(command)))
                    .thenApply(results -> results.get(0)), this::after, known.size(), ops).run();
        }
        return write(known, request).thenApply(results -> {
            Result.Txn txn = (Result.Txn) accepted(results.get(0));
            return new TransactionResult(txn.successful(), txn.index(), txn.conflicts());
        });
    }

    /**
     * Sends one raw request: its commands apply in order in one log entry, and the results come back
     * in the same order. The building block of the typed methods; a {@link Result.Rejected} in the
     * results means that command was invalid and wrote nothing. A request that names a key held by a transaction
     * across groups is sent again until it is settled (or the operation's deadline passes).
     */
    public CompletableFuture<List<Result>> submitAsync(Request request) {
        return handOff(submit0(request));
    }

    private CompletableFuture<List<Result>> submit0(Request request) {
        return events.timed("request", submit(request), results -> results.stream().allMatch(RatchetClient::applied)
                ? ClientEvents.APPLIED : CONDITION_FAILED);
    }

    private CompletableFuture<List<Result>> submit(Request request) {
        try {
            request.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return whenShaped(ls -> write(ls, request));
    }

    /**
     * As {@link #submitAsync(Request)}, to group {@code group}'s leader whatever keys the request names (the
     * front end refuses a key of another group): how the steps of a transaction across groups that name no
     * key (a settle) reach the group they are for. Raw: a {@link Result.Locked} answer (a key held by another
     * transaction; nothing applied) is returned as it is, not waited out as {@link #submitAsync(Request)} does.
     */
    public CompletableFuture<List<Result>> submitAsync(int group, Request request) {
        return handOff(submit0(group, request));
    }

    private CompletableFuture<List<Result>> submit0(int group, Request request) {
        try {
            request.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return whenShaped(ls -> group < 0 || group >= ls.size()
                ? CompletableFuture.failedFuture(invalid(new InvalidCommandException("the cluster has " + ls.size()
                + " groups, numbered from 0; there is no group " + group)))
                : send(ls.get(group), request));
    }

    /** A validated request, to the lane of the group its keys are in. */
    private CompletableFuture<List<Result>> write(List<Lane> ls, Request request) {
        int group = Groups.of(request, ls.size());
        if (group == Groups.SEVERAL) {
            return CompletableFuture.failedFuture(invalid(new InvalidCommandException(spansGroups(request, ls.size()))));
        }
        // A request that names no key (the quota, permissions) is the cluster's: group 0 keeps it.
        return write(ls.get(Math.max(group, 0)), request);
    }

    /** Why a request whose keys are in several groups is refused. */
    private static String spansGroups(Request request, int groups) {
        Map<Integer, List<String>> byGroup = Groups.byGroup(
                request.commands().stream().flatMap(c -> Groups.keys(c).stream()).toList(), groups);
        return "the keys of one request are in " + byGroup.size() + " of the cluster's " + groups + " groups "
                + byGroup + ": one request goes to one group (a transaction across groups is sent as one, with"
                + " transaction()); give keys that change together one hash tag, as in user:{42} and email:{42},"
                + " so that they share a group";
    }

    public CompareExchangeResult put(String key, Object value, long index) {
        return await(put0(key, value, index));
    }

    public CompareExchangeResult put(String key, Object value, long index, PutOptions options) {
        return await(put0(key, value, index, options));
    }

    public CompareExchangeResult delete(String key, long index) {
        return await(delete0(key, index));
    }

    public CompareExchangeResult write(Command.Op write) {
        return await(write0(write));
    }

    public CompareExchangeResult write(Command.Op write, String idempotencyKey, Duration retention) {
        return await(write0(write, idempotencyKey, retention));
    }

    public TransactionResult transaction(List<Command.Op> ops) {
        return await(transaction0(ops));
    }

    public TransactionResult transaction(List<Command.Op> ops, String idempotencyKey, Duration retention) {
        return await(transaction0(ops, idempotencyKey, retention));
    }

    // ---- reads

    /** The item under {@code key}, linearizably: it reflects every write acknowledged before the call. */
    public CompletableFuture<Optional<Item>> getAsync(String key) {
        return handOff(get0(key));
    }

    private CompletableFuture<Optional<Item>> get0(String key) {
        Query.Get get = new Query.Get(key);
        try {
            get.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        // A key a transaction across groups holds comes back locked from the batch (which waits for nobody):
        // asked again alone, the read waits where the key is until it is settled.
        return events.timed("get", onLaneOf(key, lane -> lane.gets.submit(get).thenCompose(results -> results.get(0) instanceof Result.Locked
                        ? read(lane, get) : CompletableFuture.completedFuture(results.get(0))))
                .thenApply(result -> Optional.ofNullable(((Result.Found) accepted(result)).item())), RatchetClient::answered);
    }

    /**
     * The items under {@code keys} that exist, in key order, as they all were at one moment. Keys in one
     * group are one linearizable read. Keys in several groups are read from each group at once, and read
     * again until two reads in a row agree (see {@link #agreed}).
     */
    public CompletableFuture<List<Item>> getAllAsync(Collection<String> keys) {
        return handOff(getAll0(keys));
    }

    private CompletableFuture<List<Item>> getAll0(Collection<String> keys) {
        Query.GetAll all = new Query.GetAll(List.copyOf(keys));
        try {
            all.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return events.timed("getAll", whenShaped(ls -> {
            Map<Integer, List<String>> byGroup = Groups.byGroup(all.keys(), ls.size());
            Supplier<CompletableFuture<List<Item>>> once = () -> inKeyOrder(byGroup.entrySet().stream()
                    .map(e -> read(ls.get(e.getKey()), new Query.GetAll(e.getValue())).thenApply(r -> ((Result.Items) r).items()))
                    .toList());
            return byGroup.size() == 1 ? once.get() : agreed(once, null, 1);
        }), RatchetClient::answered);
    }

    /** How many reads of several groups {@link #agreed} makes at most before it gives up. */
    static final int MAX_AGREEING_READS = 16;

    /**
     * Reads of several groups, repeated until two in a row return the same items at the same indexes: then
     * every item returned had that index over the whole time between the two reads, since an item's index
     * changes with every write and never comes back, and each group's read is linearizable (a read of a key
     * a transaction across groups holds waits until it is settled there). So the items are as they all were
     * at one moment, whatever transactions across groups committed meanwhile. (A key absent from both may
     * have been created and deleted between them.) Under writes that never pause, it gives up after
     * {@link #MAX_AGREEING_READS} reads.
     */
    private CompletableFuture<List<Item>> agreed(Supplier<CompletableFuture<List<Item>>> read, List<Item> last, int reads) {
        return read.get().thenCompose(items -> {
            if (items.equals(last)) {
                return CompletableFuture.completedFuture(items);
            }
            if (reads >= MAX_AGREEING_READS) {
                return CompletableFuture.failedFuture(new ClusterUnavailableException("the items read from several groups"
                        + " changed between each of " + MAX_AGREEING_READS + " reads in a row, so no moment they agree on"
                        + " was seen", null));
            }
            return agreed(read, items, reads + 1);
        });
    }

    /**
     * Items whose key starts with {@code prefix}, in key order, skipping {@code start}, at most {@code pageSize}.
     * With several groups, each lists its own items in key order and the page is their merge: each group
     * is asked for its first {@code start + pageSize}, so a deep {@code start} costs every group that many.
     * A page is as its items all were at one moment (read until two reads agree, as {@link #getAllAsync}).
     */
    public CompletableFuture<List<Item>> listAsync(String prefix, int start, int pageSize) {
        return handOff(list0(prefix, start, pageSize));
    }

    private CompletableFuture<List<Item>> list0(String prefix, int start, int pageSize) {
        Query.ListItems page = new Query.ListItems(prefix, start, pageSize);
        try {
            page.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return events.timed("list", whenShaped(ls -> {
            if (ls.size() == 1) {
                return read(first, page).thenApply(r -> ((Result.Items) r).items());
            }
            long wanted = (long) start + pageSize;
            return agreed(() -> inKeyOrder(ls.stream().map(lane -> listFirst(lane, page.prefix(), wanted, new ArrayList<>()))
                    .toList()).thenApply(merged -> List.copyOf(
                    merged.subList((int) Math.min(start, merged.size()), (int) Math.min(wanted, merged.size())))), null, 1);
        }), RatchetClient::answered);
    }

    /** A group's first {@code wanted} items under {@code prefix}, in key order, read a page at a time. */
    private CompletableFuture<List<Item>> listFirst(Lane lane, String prefix, long wanted, List<Item> got) {
        int size = (int) Math.min(Limits.MAX_PAGE_SIZE, wanted - got.size());
        return read(lane, new Query.ListItems(prefix, got.size(), size)).thenCompose(r -> {
            List<Item> items = ((Result.Items) r).items();
            got.addAll(items);
            return items.size() < size || got.size() >= wanted ? CompletableFuture.completedFuture(got)
                    : listFirst(lane, prefix, wanted, got);
        });
    }

    /** The items of every part, together, in key order (the order each group lists its own in). */
    private static CompletableFuture<List<Item>> inKeyOrder(List<CompletableFuture<List<Item>>> parts) {
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenApply(done -> {
            List<Item> all = new ArrayList<>();
            parts.forEach(p -> all.addAll(p.join()));
            if (parts.size() > 1) {
                all.sort(Comparator.comparing((Item item) -> Keys.normalize(item.key())));
            }
            return all;
        });
    }

    /**
     * A stale read: the first node that answers serves {@code key} from its local state, without
     * consulting the leader. Cheaper, and available without a leader, but it may miss acknowledged writes.
     */
    public CompletableFuture<StaleRead<Optional<Item>>> getStaleAsync(String key) {
        return handOff(getStale0(key));
    }

    private CompletableFuture<StaleRead<Optional<Item>>> getStale0(String key) {
        Query.Get get = new Query.Get(key);
        try {
            get.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return onLaneOf(key, lane -> staleFrom(lane, transport.addresses(), 0, Codec.encodeQuery(get),
                "no node asked", r -> Optional.ofNullable(((Result.Found) r).item())));
    }

    /** The document under {@code id} with its guard index, linearizably. */
    /**
     * The cluster's view of hot keys: the {@code limit} keys whose conditions were refused most often,
     * as counted by the node that answers (the leader first) since it started, with attempts and commits.
     * Not replicated state, so it is read as a stale read; every node applies the same entries and counts
     * alike. Beside {@link #metrics()}, what this client saw of the same keys.
     */
    public CompletableFuture<StaleRead<Result.Contention>> contentionAsync(int limit) {
        return handOff(contention0(limit));
    }

    private CompletableFuture<StaleRead<Result.Contention>> contention0(int limit) {
        Query.Contention query = new Query.Contention(limit);
        try {
            query.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return whenShaped(ls -> {
            List<CompletableFuture<StaleRead<Result.Contention>>> parts = ls.stream().map(lane -> {
                List<String> nodes = new ArrayList<>(transport.addresses());
                nodes.remove(lane.transport.leader());
                nodes.add(0, lane.transport.leader());
                return staleFrom(lane, nodes, 0, Codec.encodeQuery(query), "no node asked", r -> (Result.Contention) r);
            }).toList();
            return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenApply(done -> {
                if (parts.size() == 1) {
                    return parts.get(0).join();
                }
                // Each group counts its own keys: the hottest of all, by the same order a node uses.
                List<Result.KeyContention> keys = new ArrayList<>();
                long since = Long.MAX_VALUE;
                for (var part : parts) {
                    keys.addAll(part.join().value().keys());
                    since = Math.min(since, part.join().value().since());
                }
                keys.sort(Comparator.comparingLong(Result.KeyContention::refused)
                        .thenComparingLong(Result.KeyContention::attempts).reversed()
                        .thenComparing(Result.KeyContention::key));
                return new StaleRead<>(new Result.Contention(since, keys.subList(0, Math.min(limit, keys.size()))),
                        parts.get(0).join().servedBy());
            });
        });
    }

    public CompletableFuture<Optional<Document>> getDocumentAsync(String id) {
        return handOff(getDocument0(id));
    }

    private CompletableFuture<Optional<Document>> getDocument0(String id) {
        Query.GetDocument get = new Query.GetDocument(id);
        try {
            get.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return events.timed("getDocument", onLaneOf(Document.guardKey(id), lane -> read(lane, get))
                .thenApply(r -> Optional.ofNullable(((Result.DocumentFound) r).document())), RatchetClient::answered);
    }

    /**
     * Waits until {@code key} is put or deleted at an index above {@code afterIndex}, or {@code timeout}
     * passes (at most {@link #MAX_WATCH}); the answer carries the key's state. Served without polling:
     * apply completes it.
     *
     * <p>A node holds the watch for at most two seconds at a time; then, or when that node is lost, the
     * watch is armed again (on another node if need be) from the same {@code afterIndex}: indexes are
     * durable, so a change committed meanwhile is reported at once. It ends by {@code timeout} plus
     * {@link #WATCH_SLACK}, always: with an answer, or with {@link ClusterUnavailableException} when no
     * node answered in that time. Cancelling the returned future ends the watch: it is not armed again
     * after the slice in flight (which the node ends within two seconds).
     */
    public CompletableFuture<WatchResult> watchAsync(String key, long afterIndex, Duration timeout) {
        return handOff(watch0(key, afterIndex, timeout));
    }

    private CompletableFuture<WatchResult> watch0(String key, long afterIndex, Duration timeout) {
        if (timeout == null || timeout.compareTo(MAX_WATCH) > 0 || timeout.isNegative() || timeout.isZero()) {
            return CompletableFuture.failedFuture(invalid(new InvalidCommandException(
                    "watch timeout must be above 0 and at most " + MAX_WATCH.toSeconds() + " s")));
        }
        Query.Watch watch = new Query.Watch(key, afterIndex, timeout.toMillis());
        try {
            watch.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        CompletableFuture<WatchResult> result = events.timed("watch", new CompletableFuture<>(), RatchetClient::answered);
        long ends = System.nanoTime() + timeout.toNanos();
        onLaneOf(key, lane -> watchFrom(lane, key, afterIndex, ends, result)).whenComplete((w, error) -> {
            if (error != null) {
                result.completeExceptionally(Failures.unwrap(error));
            } else if (w != null) {
                result.complete(w);
            }
        });
        return result;
    }

    /**
     * One slice of a watch ending at {@code ends} (monotonic nanos): at most {@link #WATCH_SLICE}, then
     * armed again from the same index. A node that goes silent (paused, cut off) holds a watch for one
     * slice, not for the whole timeout; a slice that got no answer is followed by the next while time
     * is left, and the last one ends by {@code ends} plus {@link #WATCH_SLACK}.
     */
    private CompletableFuture<WatchResult> watchFrom(Lane lane, String key, long afterIndex, long ends,
                                                     CompletableFuture<WatchResult> result) {
        long now = System.nanoTime();
        long sliceEnds = Math.min(ends, now + WATCH_SLICE.toNanos());
        // Each attempt asks its node to wait only for what is left of the slice; past the end, for a
        // moment (one look at the key's last change), within the slack.
        Supplier<byte[]> rearmed = () -> Codec.encodeQuery(new Query.Watch(key, afterIndex,
                Math.max(1, TimeUnit.NANOSECONDS.toMillis(sliceEnds - System.nanoTime()))));
        Duration bound = Duration.ofNanos(sliceEnds - now).plus(WATCH_SLACK);
        // A node silent at the end of the slice is given half the slack; the other half is for one look
        // at the key on another node.
        Duration perAttempt = Duration.ofNanos(sliceEnds - now).plus(WATCH_SLACK.dividedBy(2));
        return sendRead(lane, rearmed, bound, perAttempt, false, "watch")
                .handle((results, error) -> {
                    boolean more = System.nanoTime() < ends;
                    if (error != null) {
                        // A closed client answers at once: armed again, the watch would recurse until its
                        // time ran out (or the stack did).
                        if (result.isDone()) {
                            return CompletableFuture.<WatchResult>completedFuture(null); // cancelled: not armed again
                        }
                        if (more && Failures.unwrap(error) instanceof ClusterUnavailableException && !transport.closed()) {
                            return watchFrom(lane, key, afterIndex, ends, result);
                        }
                        return CompletableFuture.<WatchResult>failedFuture(Failures.unwrap(error));
                    }
                    Result.Watched w = (Result.Watched) accepted(results.get(0));
                    if (!w.changed() && more) {
                        // Cancelled (the caller no longer waits): the slice that answered is the last one.
                        return result.isDone() ? CompletableFuture.<WatchResult>completedFuture(null)
                                : watchFrom(lane, key, afterIndex, ends, result);
                    }
                    return CompletableFuture.completedFuture(
                            new WatchResult(w.changed(), w.lastChange(), Optional.ofNullable(w.item())));
                })
                .thenCompose(next -> next);
    }

    public Optional<Item> get(String key) {
        return await(get0(key));
    }

    public Optional<Document> getDocument(String id) {
        return await(getDocument0(id));
    }

    public WatchResult watch(String key, long afterIndex, Duration timeout) {
        return await(watch0(key, afterIndex, timeout));
    }

    public List<Item> getAll(Collection<String> keys) {
        return await(getAll0(keys));
    }

    public List<Item> list(String prefix, int start, int pageSize) {
        return await(list0(prefix, start, pageSize));
    }

    public StaleRead<Result.Contention> contention(int limit) {
        return await(contention0(limit));
    }

    public StaleRead<Optional<Item>> getStale(String key) {
        return await(getStale0(key));
    }

    /**
     * Completes {@code delay} from now on this client's timer thread (for recipes that pause between
     * attempts); fails once the client is closed. Its threads end with {@link #close()}.
     */
    public CompletableFuture<Void> after(Duration delay) {
        return transport.after(delay);
    }

    /**
     * Holds, in every group, each decision to commit a transaction across groups until {@code hold} has
     * passed in cluster time ({@link Duration#ZERO}: lifts it); coordinators wait and try again meanwhile.
     * What a backup of several groups does around its checkpoints, so that together they are one consistent
     * cut: no transaction is committed in one file and missing from another. Nothing to do in one group.
     */
    public CompletableFuture<Void> fenceAsync(Duration hold) {
        return handOff(fence0(hold));
    }

    private CompletableFuture<Void> fence0(Duration hold) {
        Command.Fence fence = new Command.Fence(hold.toMillis());
        try {
            fence.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return whenShaped(ls -> ls.size() == 1 ? CompletableFuture.completedFuture(null)
                : CompletableFuture.allOf(ls.stream().map(lane -> send(lane, Request.of(List.of(fence)))
                        .thenApply(results -> accepted(results.get(0)))).toArray(CompletableFuture[]::new)));
    }

    // ---- the storage quota

    /**
     * Sets the cluster's storage quota, through the log: from that entry on every replica refuses writes
     * that would take the state past {@code bytes} (counted as {@link Result.Quota} says). Lowering it
     * below what is used refuses growth and removes nothing. The leader refuses a quota larger than the
     * disk that holds its store ({@link InvalidRequestException}).
     */
    public CompletableFuture<Result.Quota> setQuotaAsync(long bytes) {
        return handOff(setQuota0(bytes));
    }

    private CompletableFuture<Result.Quota> setQuota0(long bytes) {
        return whenShaped(ls -> {
            // Each group holds its share of the cluster's quota (rounded up), and refuses what would pass it.
            long share = (bytes + ls.size() - 1) / ls.size();
            Request set = Request.of(List.of(new Command.SetQuota(share, false)));
            try {
                set.validate();
            } catch (InvalidCommandException e) {
                return CompletableFuture.failedFuture(invalid(ls.size() == 1 ? e : new InvalidCommandException(
                        e.getMessage() + " (each of the cluster's " + ls.size() + " groups holds a share of the quota)")));
            }
            return summed(ls, lane -> write(lane, set).thenApply(results -> (Result.Quota) accepted(results.get(0))));
        });
    }

    /** Each group's quota and use, added up: what the cluster holds. */
    private static CompletableFuture<Result.Quota> summed(List<Lane> ls, Function<Lane, CompletableFuture<Result.Quota>> ask) {
        List<CompletableFuture<Result.Quota>> parts = ls.stream().map(ask).toList();
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenApply(done -> new Result.Quota(
                parts.stream().mapToLong(p -> p.join().used()).sum(), parts.stream().mapToLong(p -> p.join().quota()).sum()));
    }

    public Result.Quota setQuota(long bytes) {
        return await(setQuota0(bytes));
    }

    /** What the state uses and its quota, linearizably. */
    public CompletableFuture<Result.Quota> quotaAsync() {
        return handOff(quota0());
    }

    private CompletableFuture<Result.Quota> quota0() {
        return whenShaped(ls -> summed(ls, lane -> read(lane, new Query.Stats()).thenApply(r -> {
            Result.Stats stats = (Result.Stats) r;
            return new Result.Quota(stats.usedBytes(), stats.quotaBytes());
        })));
    }

    public Result.Quota quota() {
        return await(quota0());
    }

    // ---- authentication and permissions

    /**
     * Adds user {@code name} with {@code roles} and a new random token, which is returned, once: the
     * cluster keeps only its SHA-256, so a lost token is replaced by removing the user and adding it again.
     */
    public String addUser(String name, List<String> roles) {
        byte[] random = new byte[32];
        new java.security.SecureRandom().nextBytes(random);
        String token = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(random);
        changeAuth(new Command.AuthChange.AddUser(name, AuthTable.tokenHash(token), roles));
        return token;
    }

    /**
     * Applies one change to the permission table (enable, users, grants) through the log; returns the
     * table after it. A change that cannot apply (a user that exists, enabling with no administrator)
     * throws {@link InvalidRequestException} naming why, and changes nothing.
     */
    public AuthTable changeAuth(Command.AuthChange change) {
        return await(submit0(Request.of(List.of(change)))
                .thenApply(results -> ((Result.AuthState) accepted(results.get(0))).table()));
    }

    /** Whether authentication is on, the users (without tokens) and the roles, linearizably. */
    public AuthTable authStatus() {
        // The permission table is the cluster's, kept in group 0.
        return await(read(first, new Query.AuthStatus()).thenApply(r -> ((Result.AuthState) r).table()));
    }

    // ---- status

    /**
     * Asks every configured node, and every member they name, in parallel, for its role, term, indexes,
     * store size and configuration (see {@link ClusterAdmin}).
     */
    public List<NodeStatus> status() {
        return admin.status();
    }

    /** The operator's view of this client's cluster: membership and its changes; closed with the client. */
    public ClusterAdmin admin() {
        return admin;
    }

    @Override
    public void close() {
        try {
            transport.close();
            admin.close();
        } finally {
            callbacks.shutdown();
        }
    }

    /**
     * {@code internal}, as the caller of an asynchronous form gets it: completed on {@link #callbacks}, or
     * as it is when it is done already (the caller's continuations then run on the caller's thread). The
     * blocking forms wait on the internal future itself, which the network thread completes: one thread
     * wake-up per call fewer (docs/PERFORMANCE.md, "Where the CPU goes now").
     */
    private <T> CompletableFuture<T> handOff(CompletableFuture<T> internal) {
        if (internal.isDone()) {
            return internal;
        }
        CompletableFuture<T> handed = new CompletableFuture<>();
        // Cancelling what the caller holds cancels the call, as it did before the hand-off (a watch is then
        // not armed again).
        handed.whenComplete((value, error) -> {
            if (handed.isCancelled()) {
                internal.cancel(false);
            }
        });
        internal.whenComplete((value, error) -> {
            try {
                callbacks.execute(() -> complete(handed, value, error));
            } catch (RejectedExecutionException closed) {
                complete(handed, value, error);
            }
        });
        return handed;
    }

    private static <T> void complete(CompletableFuture<T> future, T value, Throwable error) {
        if (error != null) {
            future.completeExceptionally(error instanceof CompletionException && error.getCause() != null ? error.getCause() : error);
        } else {
            future.complete(value);
        }
    }

    // ---- the send path

    /** The outcome of a write whose condition failed: a normal answer, named as the failure would be. */
    private static final String CONDITION_FAILED = ErrorCode.CONDITION_FAILED.wireName();

    private static String outcomeOf(CompareExchangeResult result) {
        return result.successful() ? ClientEvents.APPLIED : CONDITION_FAILED;
    }

    /** Whether a raw request's result is an applied one (a failed condition is not). */
    private static boolean applied(Result result) {
        return !(result instanceof Result.Write w && !w.successful()) && !(result instanceof Result.Txn t && !t.successful());
    }

    private static String answered(Object read) {
        return ClientEvents.OK;
    }

    private static CompareExchangeResult toWriteResult(Result result) {
        Result.Write w = (Result.Write) accepted(result);
        return new CompareExchangeResult(w.successful(), w.key(), w.item());
    }

    /**
     * Sends a validated request: its commands enter one log entry and apply in order at its index.
     * Requests that queue up while another is in flight share a message, and the leader's front end
     * joins messages from many clients into one log entry. The answer is as the cluster gave it.
     */
    private CompletableFuture<List<Result>> send(Lane lane, Request validated) {
        return lane.writes.submit(validated).exceptionallyCompose(e -> CompletableFuture.failedFuture(
                Failures.unwrap(e) instanceof InvalidCommandException invalid ? invalid(invalid) : Failures.unwrap(e)));
    }

    /**
     * As {@link #send}, for a write that waits out a held key: a request refused whole as {@link Result.Locked}
     * (a key held by a transaction across groups) applied nothing, so it is sent again after a jittered
     * pause until the operation's deadline, by when the transaction's coordinator or, after its lease, the
     * cluster has settled it.
     */
    private CompletableFuture<List<Result>> write(Lane lane, Request validated) {
        return send(lane, validated).thenCompose(results -> refusedForNow(results.get(0), validated)
                ? resendWhileHeld(lane, validated, results.get(0), 1, System.nanoTime() + options.operationTimeout().toNanos())
                : CompletableFuture.completedFuture(results));
    }

    /**
     * Whether a request's answer says that nothing of it applied for a reason of the moment that is not its
     * own to fix: a key held by a transaction across groups, or a message it shared with another thread's
     * command that the cluster cannot take yet (the leader refuses such a message whole,
     * {@link Result.Unsupported}; a request that carries no such command goes again in a message of its own).
     */
    private static boolean refusedForNow(Result answer, Request request) {
        if (answer instanceof Result.Unsupported unsupported) {
            return request.commands().stream().noneMatch(c -> c.kind().name().equalsIgnoreCase(unsupported.command()));
        }
        return answer instanceof Result.Locked;
    }

    private CompletableFuture<List<Result>> resendWhileHeld(Lane lane, Request validated, Result refused, int attempt,
                                                            long deadline) {
        Duration pause = LOCKED_BACKOFF.delay(attempt, ThreadLocalRandom.current());
        if (System.nanoTime() + pause.toNanos() > deadline) {
            if (refused instanceof Result.Locked locked) {
                return CompletableFuture.failedFuture(new ClusterUnavailableException("key '" + locked.key()
                        + "' is still held by transaction " + locked.txn() + " across groups after "
                        + options.operationTimeout().toMillis() + " ms; nothing of the request applied", null));
            }
            return CompletableFuture.completedFuture(Collections.nCopies(validated.commands().size(), refused)); // accepted() names it
        }
        return after(pause).thenCompose(x -> send(lane, validated)).thenCompose(results ->
                refusedForNow(results.get(0), validated) ? resendWhileHeld(lane, validated, results.get(0), attempt + 1, deadline)
                        : CompletableFuture.completedFuture(results));
    }

    /** The pauses between sends of a request refused because a key is held (see {@link #write(Lane, Request)}). */
    private static final Backoff LOCKED_BACKOFF = new Backoff(Duration.ofMillis(5), Duration.ofMillis(200));

    /** One read in {@code lane}'s group: linearizable, to its leader first, any node's front end can serve it. */
    private CompletableFuture<Result> read(Lane lane, Query query) {
        try {
            query.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return sendRead(lane, Codec.encodeQuery(query), options.operationTimeout(), options.requestTimeout(), "read")
                .thenApply(results -> accepted(results.get(0)));
    }

    /** A read changes nothing, so any failure is retried until the deadline. */
    private CompletableFuture<List<Result>> sendRead(Lane lane, byte[] query, Duration budget, Duration perAttempt, String what) {
        return sendRead(lane, () -> query, budget, perAttempt, true, what);
    }

    private CompletableFuture<List<Result>> sendRead(Lane lane, Supplier<byte[]> query, Duration budget, Duration perAttempt,
                                                     boolean adaptive, String what) {
        return lane.attempts.send(Rpc.READ_CALL, query, budget, perAttempt, adaptive)
                .handle((delivery, error) -> {
                    if (error == null) {
                        return Codec.decodeResults(delivery.results());
                    }
                    Throwable cause = Failures.unwrap(error);
                    if (cause instanceof RatchetException r) {
                        throw r;
                    }
                    Attempts.GaveUp g = (Attempts.GaveUp) cause;
                    throw new ClusterUnavailableException("the " + what + " got no answer in " + g.spentMillis
                            + " ms (" + g.getMessage() + ")", g);
                });
    }

    private <T> CompletableFuture<StaleRead<T>> staleFrom(Lane lane, List<String> nodes, int i, byte[] query, String last,
                                                          Function<Result, T> decode) {
        if (i == nodes.size()) {
            return CompletableFuture.failedFuture(new ClusterUnavailableException(
                    "no node answered a stale read (" + last + ")", null));
        }
        String node = nodes.get(i);
        return lane.transport.call(Rpc.STALE_READ_CALL, node, query, options.requestTimeout()).thenCompose(outcome -> {
            if (outcome instanceof Transport.Answered a) {
                T value = decode.apply(accepted(Codec.decodeResults(a.results()).get(0)));
                return CompletableFuture.completedFuture(new StaleRead<>(value, node));
            }
            RatchetException ending = outcome instanceof Transport.Refused r ? Attempts.ending(r.refusal()) : null;
            if (ending != null) {
                return CompletableFuture.failedFuture(ending); // else another node may serve it
            }
            return staleFrom(lane, nodes, i + 1, query, node + ": " + outcome, decode);
        });
    }

    /**
     * {@code result}, unless it is a refusal: a {@link Result.Rejected} throws the invalid-request error it
     * stands for, a {@link Result.QuotaExceeded} a {@link QuotaExceededException}, a {@link Result.DiskFull} a
     * {@link DiskFullException}, an add's refusals their own exceptions.
     */
    private static Result accepted(Result result) {
        return switch (result.kind()) {
            case REJECTED -> throw invalid(new InvalidCommandException(((Result.Rejected) result).reason()));
            case QUOTA_EXCEEDED -> {
                Result.QuotaExceeded q = (Result.QuotaExceeded) result;
                throw new QuotaExceededException(q.used(), q.quota(), q.needed());
            }
            case DISK_FULL -> {
                Result.DiskFull d = (Result.DiskFull) result;
                throw new DiskFullException(d.node(), d.freeBytes(), d.floorBytes());
            }
            // Left so only by a raw send (write sends again): a prepare's coordinator reads it with acceptedOrLocked.
            case LOCKED -> throw new ClusterUnavailableException("key '" + ((Result.Locked) result).key()
                    + "' is held by transaction " + ((Result.Locked) result).txn() + " across groups", null);
            case NOT_AN_INTEGER -> {
                Result.NotAnInteger n = (Result.NotAnInteger) result;
                throw new NotAnIntegerException(n.key(), n.item());
            }
            case OVERFLOW -> {
                Result.Overflow o = (Result.Overflow) result;
                throw new AddOverflowException(o.key(), o.item(), o.delta());
            }
            case UNSUPPORTED -> {
                Result.Unsupported u = (Result.Unsupported) result;
                throw new UnsupportedCommandException(u.command(), u.reason());
            }
            case WRITE, FOUND, ITEMS, STATS, TXN, SWEPT, WATCHED, DOCUMENT_FOUND, SESSION_OPENED, SESSION_EXPIRED,
                    CONTENTION, QUOTA, AUTH_STATE, SHAPE, TXN_STATE, FENCED -> result;
        };
    }

    /** As {@link #accepted}, leaving a {@link Result.Locked} as it is. */
    static Result acceptedOrLocked(Result result) {
        return result instanceof Result.Locked ? result : accepted(result);
    }

    private static InvalidRequestException invalid(InvalidCommandException e) {
        return new InvalidRequestException(e.getMessage(), e);
    }

    private static InvalidRequestException noRetention() {
        return invalid(new InvalidCommandException("an idempotency key needs a retention: how long the cluster remembers it"));
    }

    private static String toJson(String what, Object value) {
        if (value == null) {
            throw new InvalidCommandException(what + " must not be null");
        }
        return Json.write(value);
    }

    static String describe(Throwable t) {
        if (t == null) {
            return "no detail";
        }
        Throwable root = Failures.unwrap(t);
        if (root instanceof TimeoutException) {
            return "timed out";
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    /**
     * Waits for a future from this API and rethrows its Ratchet error as is: what every blocking twin
     * of an async method does (recipes built on this client use it too).
     */
    public static <T> T await(CompletableFuture<T> future) {
        try {
            return future.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RatchetException r) {
                throw r;
            }
            throw e;
        }
    }
}
