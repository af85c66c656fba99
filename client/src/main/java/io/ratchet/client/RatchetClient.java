package io.ratchet.client;

import static io.ratchet.protocol.RaftBytes.message;

import io.ratchet.client.session.ClusterSession;
import io.ratchet.client.session.SessionOptions;
import io.ratchet.client.lock.Locks;
import io.ratchet.client.reservation.Reservations;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.GroupName;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.LogInfoProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.ServerNotReadyException;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.protocol.exceptions.TransferLeadershipException;
import org.apache.ratis.retry.ExponentialBackoffRetry;
import org.apache.ratis.util.TimeDuration;

/**
 * A connection to a Ratchet cluster. Thread-safe; share one per process.
 *
 * <p>Every method has an asynchronous form returning a {@link CompletableFuture} and a blocking form
 * that waits for it. Writes one client sends are applied in the order it sent them. Reads are
 * linearizable unless the method says stale.
 *
 * <p>Errors: {@link InvalidRequestException} (nothing written, do not retry unchanged),
 * {@link UnknownOutcomeException} (a write got no answer: it may have been applied),
 * {@link ClusterUnavailableException} (a read got no answer). Every retry is bounded by
 * {@link ClientOptions#maxAttempts()} and {@link ClientOptions#operationTimeout()}.
 */
public final class RatchetClient implements AutoCloseable {
    private static final String INVALID_MARKER = InvalidCommandException.class.getName() + " from Server ";

    private final ClientOptions options;
    private final RaftGroup group;
    /**
     * Replaced after a request fails for want of an answer: Ratis fails every later ordered request of
     * a client whose ordered stream broke, so a fresh one (with a fresh client id) takes over.
     */
    private final AtomicReference<RaftClient> raft = new AtomicReference<>();
    /** Watches hold their answer for long; they get a client of their own with a long request timeout. */
    private final AtomicReference<RaftClient> watchRaft = new AtomicReference<>();
    private final AtomicReference<RaftClient> sideRaft = new AtomicReference<>();
    private final GroupCommit<Request> groupCommit = new GroupCommit<>(GroupCommit.WRITES, this::send,
            GroupCommit.DEFAULT_MESSAGES_IN_FLIGHT, GroupCommit.MAX_HOLD_NANOS);
    /**
     * Gets that queue up share one read message and one ReadIndex. One message in flight measured best
     * (16 clients: 10,567 gets/s, against 7,940 with two and 2,248 unbatched; docs/PERFORMANCE.md);
     * {@code ratchet.getBatch.inFlight} overrides it for measurements.
     */
    private final GroupCommit<Query.Get> getBatches = new GroupCommit<>(GroupCommit.GETS, this::sendRead,
            Integer.getInteger("ratchet.getBatch.inFlight", 1), GroupCommit.MAX_HOLD_NANOS);
    private volatile boolean closed;
    private final Metrics metrics = new Metrics();

    /** The longest a single watch may wait. */
    public static final Duration MAX_WATCH = Duration.ofSeconds(60);

    private RatchetClient(ClientOptions options) {
        this.options = options;
        List<RaftPeer> peers = options.peers().entrySet().stream()
                .map(e -> RaftPeer.newBuilder().setId(e.getKey()).setAddress(e.getValue()).build())
                .toList();
        this.group = RaftGroup.valueOf(GroupName.toGroupId(options.group()), peers);
        raft.set(newRaftClient());
    }

    private RaftClient newRaftClient() {
        return newRaftClient(options.requestTimeout());
    }

    private RaftClient watchClient() {
        return lazily(watchRaft, MAX_WATCH.plus(options.requestTimeout()));
    }

    /**
     * Stale reads name one node each. Ratis numbers ordered requests per target, so mixing them with the
     * leader-bound stream on one client stalls the stream on a node that is both; they get a client of
     * their own.
     */
    private RaftClient sideClient() {
        return lazily(sideRaft, options.requestTimeout());
    }

    private RaftClient lazily(AtomicReference<RaftClient> lane, Duration requestTimeout) {
        synchronized (raft) {
            RaftClient client = lane.get();
            if (client == null) {
                if (closed) {
                    throw new ClusterUnavailableException("the client is closed", null);
                }
                client = newRaftClient(requestTimeout);
                lane.set(client);
            }
            return client;
        }
    }

    private RaftClient newRaftClient(Duration requestTimeout) {
        RaftProperties properties = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties,
                TimeDuration.valueOf(requestTimeout.toMillis(), TimeUnit.MILLISECONDS));
        return RaftClient.newBuilder()
                .setClientId(ClientId.randomId())
                .setRaftGroup(group)
                .setProperties(properties)
                // Ratis' default retries forever; ours gives up, and the operation timeout caps it too.
                .setRetryPolicy(ExponentialBackoffRetry.newBuilder()
                        .setBaseSleepTime(TimeDuration.valueOf(100, TimeUnit.MILLISECONDS))
                        .setMaxSleepTime(TimeDuration.valueOf(1, TimeUnit.SECONDS))
                        .setMaxAttempts(options.maxAttempts())
                        .build())
                .build();
    }

    /** Swaps in a fresh Ratis client for one whose request went unanswered; later callers use the new one. */
    private void replace(RaftClient failed) {
        synchronized (raft) {
            if (closed) {
                return;
            }
            if (raft.get() == failed) {
                raft.set(newRaftClient());
            } else if (!watchRaft.compareAndSet(failed, null) && !sideRaft.compareAndSet(failed, null)) {
                return;
            }
        }
        // Closing waits for gRPC's graceful shutdown (seconds); the caller's answer must not.
        CompletableFuture.runAsync(() -> closeQuietly(failed));
    }

    private static void closeQuietly(RaftClient client) {
        try {
            client.close();
        } catch (IOException | RuntimeException e) {
            // It has failed already; its in-flight requests end with AlreadyClosedException.
        }
    }

    /** Connects to {@code host:port,host:port,...} (or {@code id=host:port,...}) with default options. */
    public static RatchetClient connect(String peers) {
        return connect(ClientOptions.parse(peers));
    }

    public static RatchetClient connect(ClientOptions options) {
        return new RatchetClient(options);
    }

    public ClientOptions options() {
        return options;
    }

    /** Per-key attempt, commit and conflict counters of the retry loops run over this client. */
    public Metrics metrics() {
        return metrics;
    }

    /** A new unit of work over documents and items, saved as one transaction with Atomic Guards. */
    public ClusterSession openSession() {
        return new ClusterSession(this, SessionOptions.defaults());
    }

    /** As {@link #openSession()}, with options (e.g. validation of what the session only read). */
    public ClusterSession openSession(SessionOptions sessionOptions) {
        return new ClusterSession(this, sessionOptions);
    }

    /**
     * The lock recipe over this client, with default options: a fresh owner id for each call and a
     * maximum lease of one hour. For other options use {@code new Locks(client, options)}.
     */
    public Locks locks() {
        return new Locks(this);
    }

    /** Create-only reservations of unique keys (emails, usernames) over this client. */
    public Reservations reservations() {
        return new Reservations(this);
    }

    // ---- writes

    /**
     * Stores {@code value} under {@code key} if {@code index} is 0 and the key is absent (create-only),
     * or if {@code index} equals the item's current index. {@code value} is any object Jackson can
     * write (a {@code JsonNode}, a record, a string, a number, ...) but null.
     */
    public CompletableFuture<CompareExchangeResult> putAsync(String key, Object value, long index) {
        return putAsync(key, value, index, null);
    }

    /** As {@link #putAsync(String, Object, long)}, with metadata: a JSON object, or null for none. */
    public CompletableFuture<CompareExchangeResult> putAsync(String key, Object value, long index, Object metadata) {
        Command.Put put;
        try {
            put = new Command.Put(key, toJson("value", value), index, metadata == null ? null : toJson("metadata", metadata));
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return writeAsync(put);
    }

    /** Removes {@code key} if {@code index} equals its current index. */
    public CompletableFuture<CompareExchangeResult> deleteAsync(String key, long index) {
        return writeAsync(new Command.Delete(key, index));
    }

    /**
     * Sends one put or delete as given, with every option the protocol has (a time-to-live judged on
     * cluster time, "expired counts as absent"): what the lock and reservation recipes are built on.
     */
    public CompletableFuture<CompareExchangeResult> writeAsync(Command.Op write) {
        return writeAsync(write, null, null);
    }

    /**
     * As {@link #writeAsync(Command.Op)}, with an idempotency key (null for none): within
     * {@code retention} a resend of the same key, even from another client after a lost answer, returns
     * the first outcome instead of applying again. A key names one write; use a fresh one for the next.
     */
    public CompletableFuture<CompareExchangeResult> writeAsync(Command.Op write, String idempotencyKey, Duration retention) {
        if (!(write instanceof Command.Put) && !(write instanceof Command.Delete)) {
            return CompletableFuture.failedFuture(invalid(new InvalidCommandException(
                    "only a put or a delete stands alone; other operations go in a transaction")));
        }
        Request request = new Request(idempotencyKey, idempotencyKey == null ? 0 : retention.toMillis(), List.of((Command) write));
        return submitAsync(request).thenApply(results -> toWriteResult(results.get(0)));
    }

    /**
     * Applies every operation or none, in one log entry: all conditions are checked first, then all
     * writes land at one index. A failed condition is a normal result listing every conflict.
     */
    public CompletableFuture<TransactionResult> transactionAsync(List<Command.Op> ops) {
        return transactionAsync(ops, null, null);
    }

    /**
     * As {@link #transactionAsync(List)}, with an idempotency key: within {@code retention} a resend
     * of the same key, even from another client after a lost answer, returns the first outcome
     * instead of applying again.
     */
    public CompletableFuture<TransactionResult> transactionAsync(List<Command.Op> ops, String idempotencyKey,
                                                                 Duration retention) {
        Request request = new Request(idempotencyKey, idempotencyKey == null ? 0 : retention.toMillis(),
                List.of(new Command.Transaction(ops)));
        return submitAsync(request).thenApply(results -> {
            Result.Txn txn = (Result.Txn) accepted(results.get(0));
            return new TransactionResult(txn.successful(), txn.index(), txn.conflicts());
        });
    }

    /**
     * Sends one raw request: its commands apply in order in one log entry, and the results come back
     * in the same order. The building block of the typed methods; a {@link Result.Rejected} in the
     * results means that command was invalid and wrote nothing.
     */
    public CompletableFuture<List<Result>> submitAsync(Request request) {
        try {
            request.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return write(request);
    }

    public CompareExchangeResult put(String key, Object value, long index) {
        return await(putAsync(key, value, index));
    }

    public CompareExchangeResult put(String key, Object value, long index, Object metadata) {
        return await(putAsync(key, value, index, metadata));
    }

    public CompareExchangeResult delete(String key, long index) {
        return await(deleteAsync(key, index));
    }

    public CompareExchangeResult write(Command.Op write) {
        return await(writeAsync(write));
    }

    public CompareExchangeResult write(Command.Op write, String idempotencyKey, Duration retention) {
        return await(writeAsync(write, idempotencyKey, retention));
    }

    public TransactionResult transaction(List<Command.Op> ops) {
        return await(transactionAsync(ops));
    }

    public TransactionResult transaction(List<Command.Op> ops, String idempotencyKey, Duration retention) {
        return await(transactionAsync(ops, idempotencyKey, retention));
    }

    // ---- reads

    /** The item under {@code key}, linearizably: it reflects every write acknowledged before the call. */
    public CompletableFuture<Optional<Item>> getAsync(String key) {
        Query.Get get = new Query.Get(key);
        try {
            get.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return getBatches.submit(get)
                .thenApply(results -> Optional.ofNullable(((Result.Found) accepted(results.get(0))).item()));
    }

    /** The items under {@code keys} that exist, in key order. */
    public CompletableFuture<List<Item>> getAllAsync(Collection<String> keys) {
        return read(new Query.GetAll(List.copyOf(keys))).thenApply(r -> ((Result.Items) r).items());
    }

    /** Items whose key starts with {@code prefix}, in key order, skipping {@code start}, at most {@code pageSize}. */
    public CompletableFuture<List<Item>> listAsync(String prefix, int start, int pageSize) {
        return read(new Query.ListItems(prefix, start, pageSize)).thenApply(r -> ((Result.Items) r).items());
    }

    /**
     * A stale read: the first node that answers serves {@code key} from its local state, without
     * consulting the leader. Cheaper, and available without a leader, but it may miss acknowledged writes.
     */
    public CompletableFuture<StaleRead<Optional<Item>>> getStaleAsync(String key) {
        Query.Get get = new Query.Get(key);
        try {
            get.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        return staleFrom(new ArrayList<>(group.getPeers()), 0, get, null);
    }

    /** The document under {@code id} with its guard index, linearizably. */
    public CompletableFuture<Optional<Document>> getDocumentAsync(String id) {
        return read(new Query.GetDocument(id)).thenApply(r -> Optional.ofNullable(((Result.DocumentFound) r).document()));
    }

    /**
     * Waits until {@code key} is put or deleted at an index above {@code afterIndex}, or {@code timeout}
     * passes (at most {@link #MAX_WATCH}); the answer carries the key's state. Served by the leader
     * without polling: apply completes it.
     */
    public CompletableFuture<WatchResult> watchAsync(String key, long afterIndex, Duration timeout) {
        if (timeout.compareTo(MAX_WATCH) > 0 || timeout.isNegative() || timeout.isZero()) {
            return CompletableFuture.failedFuture(invalid(new InvalidCommandException(
                    "watch timeout must be above 0 and at most " + MAX_WATCH.toSeconds() + " s")));
        }
        Query.Watch watch = new Query.Watch(key, afterIndex, timeout.toMillis());
        try {
            watch.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        // A watch is a read: any failure (no leader yet, say) is retried, within the watch's own time.
        Message request = message(Codec.encodeQuery(watch));
        return withRetries(this::watchClient, timeout.plus(options.operationTimeout()), cause -> true,
                raft -> raft.async().sendReadOnlyUnordered(request),
                reply -> {
                    Result.Watched w = (Result.Watched) decodeOne(reply);
                    return new WatchResult(w.changed(), w.lastChange(), Optional.ofNullable(w.item()));
                },
                (cause, spent) -> new ClusterUnavailableException(
                        "the watch got no answer in " + spent + " ms (" + describe(cause) + ")", cause));
    }

    public Optional<Item> get(String key) {
        return await(getAsync(key));
    }

    public Optional<Document> getDocument(String id) {
        return await(getDocumentAsync(id));
    }

    public WatchResult watch(String key, long afterIndex, Duration timeout) {
        return await(watchAsync(key, afterIndex, timeout));
    }

    public List<Item> getAll(Collection<String> keys) {
        return await(getAllAsync(keys));
    }

    public List<Item> list(String prefix, int start, int pageSize) {
        return await(listAsync(prefix, start, pageSize));
    }

    public StaleRead<Optional<Item>> getStale(String key) {
        return await(getStaleAsync(key));
    }

    // ---- status

    /** Asks every configured node, in parallel, for its role, term, indexes and store size. */
    public List<NodeStatus> status() {
        // A Ratis client of its own, for this call only: a node that does not answer fails its target's
        // ordered stream, which must neither disturb the other nodes' answers nor outlive this call.
        RaftClient probe = newRaftClient(options.requestTimeout());
        try {
            List<CompletableFuture<NodeStatus>> answers = options.peers().entrySet().stream()
                    .map(e -> CompletableFuture.supplyAsync(() -> statusOf(probe, e.getKey(), e.getValue())))
                    .toList();
            return answers.stream().map(CompletableFuture::join)
                    .sorted(java.util.Comparator.comparing(NodeStatus::id)).toList();
        } finally {
            CompletableFuture.runAsync(() -> closeQuietly(probe));
        }
    }

    private NodeStatus statusOf(RaftClient raft, String id, String address) {
        RaftPeerId peer = RaftPeerId.valueOf(id);
        try {
            GroupInfoReply info = raft.getGroupManagementApi(peer).info(group.getGroupId());
            RoleInfoProto role = info.getRoleInfoProto();
            LogInfoProto log = info.getLogInfoProto();
            String self = role.getSelf().getId().toStringUtf8();
            String leader = switch (role.getRole()) {
                case LEADER -> self;
                case FOLLOWER -> role.getFollowerInfo().getLeaderInfo().getId().getId().toStringUtf8();
                default -> null;
            };
            Result.Stats stats = (Result.Stats) decodeOne(raft.async()
                    .sendStaleRead(message(Codec.encodeQuery(new Query.Stats())), 0, peer)
                    .get(options.requestTimeout().toMillis(), TimeUnit.MILLISECONDS));
            return new NodeStatus(self, address, role.getRole().name(), leader == null || leader.isEmpty() ? null : leader,
                    log.getLastEntry().getTerm(), log.getApplied().getIndex(), log.getCommitted().getIndex(),
                    stats.clusterTime(), stats.itemCount(), null);
        } catch (IOException | ExecutionException | TimeoutException | RuntimeException e) {
            return NodeStatus.unreachable(id, address, describe(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return NodeStatus.unreachable(id, address, "interrupted");
        }
    }

    @Override
    public void close() {
        List<RaftClient> open = new ArrayList<>();
        synchronized (raft) {
            closed = true;
            open.add(raft.get());
            open.add(watchRaft.getAndSet(null));
            open.add(sideRaft.getAndSet(null));
        }
        open.stream().filter(java.util.Objects::nonNull).forEach(RatchetClient::closeQuietly);
    }

    // ---- the send path

    private static CompareExchangeResult toWriteResult(Result result) {
        Result.Write w = (Result.Write) accepted(result);
        return new CompareExchangeResult(w.successful(), w.key(), w.item());
    }

    /**
     * Sends a validated request: its commands enter one log entry and apply in order at its index.
     * Requests that queue up while others are in flight share a message and so a log entry.
     */
    private CompletableFuture<List<Result>> write(Request validated) {
        return groupCommit.submit(validated);
    }

    /**
     * Sends one requests message (one or more requests). Refusals made before anything was appended
     * are resent; any other failure maps to one exception for every request in the message.
     */
    private CompletableFuture<List<Result>> send(byte[] request) {
        Message message = message(request);
        return withRetries(RatchetClient::refusedBeforeAppend,
                raft -> raft.async().send(message),
                reply -> Codec.decodeResults(reply.getMessage().getContent().toByteArray()),
                (cause, spent) -> new UnknownOutcomeException("the write got no answer in " + spent
                        + " ms; it may or may not have been applied (" + describe(cause) + ")", cause));
    }

    CompletableFuture<Result> read(Query query) {
        try {
            query.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        Message request = message(Codec.encodeQuery(query));
        return withRetries(cause -> true, raft -> raft.async().sendReadOnlyUnordered(request),
                RatchetClient::decodeOne, RatchetClient::readGaveUp);
    }

    /**
     * Sends one read message (a batch of gets). Unordered: a read need not wait for the replies of
     * other threads' writes sent before it; it still reflects every write acknowledged before it was
     * sent, which is what linearizable promises. A read changes nothing, so any failure is retried
     * until the deadline.
     */
    private CompletableFuture<List<Result>> sendRead(byte[] query) {
        Message request = message(query);
        return withRetries(cause -> true, raft -> raft.async().sendReadOnlyUnordered(request),
                reply -> Codec.decodeResults(reply.getMessage().getContent().toByteArray()), RatchetClient::readGaveUp);
    }

    private static RatchetException readGaveUp(Throwable cause, long spent) {
        return new ClusterUnavailableException("the read got no answer in " + spent + " ms (" + describe(cause) + ")", cause);
    }

    /**
     * Sends through the current Ratis client (which itself retries, bounded, across nodes) and, when an
     * attempt fails in a way {@code retriable} allows, again with jittered backoff until the operation
     * timeout. Ratis hands some refusals straight back (a leader stepping down, a read index with no
     * leader yet); those are safe to resend because nothing was appended.
     */
    private <T> CompletableFuture<T> withRetries(Predicate<Throwable> retriable,
                                                 Function<RaftClient, CompletableFuture<RaftClientReply>> send,
                                                 Function<RaftClientReply, T> decode,
                                                 BiFunction<Throwable, Long, RatchetException> giveUp) {
        return withRetries(raft::get, options.operationTimeout(), retriable, send, decode, giveUp);
    }

    /** As above, through the Ratis client {@code client} gives at each attempt, within {@code budget}. */
    private <T> CompletableFuture<T> withRetries(Supplier<RaftClient> client, Duration budget, Predicate<Throwable> retriable,
                                                 Function<RaftClient, CompletableFuture<RaftClientReply>> send,
                                                 Function<RaftClientReply, T> decode,
                                                 BiFunction<Throwable, Long, RatchetException> giveUp) {
        long start = System.nanoTime();
        long deadline = start + budget.toNanos();
        return attempt(1, start, deadline, client, retriable, send, decode, giveUp);
    }

    private <T> CompletableFuture<T> attempt(int attempt, long start, long deadline, Supplier<RaftClient> client,
                                             Predicate<Throwable> retriable,
                                             Function<RaftClient, CompletableFuture<RaftClientReply>> send,
                                             Function<RaftClientReply, T> decode,
                                             BiFunction<Throwable, Long, RatchetException> giveUp) {
        RaftClient raft = client.get();
        long left = Math.max(1, deadline - System.nanoTime());
        return send.apply(raft)
                .orTimeout(left, TimeUnit.NANOSECONDS)
                .handle((reply, error) -> {
                    if (error == null && reply.isSuccess()) {
                        return CompletableFuture.completedFuture(decode.apply(reply));
                    }
                    Throwable cause = error != null ? unwrap(error) : reply.getException();
                    RatchetException invalid = invalidFrom(cause);
                    if (invalid != null) {
                        return CompletableFuture.<T>failedFuture(invalid);
                    }
                    replace(raft);
                    long pause = backoffNanos(attempt);
                    if (!(cause instanceof TimeoutException) && retriable.test(cause)
                            && System.nanoTime() + pause < deadline && !closed) {
                        Executor later = CompletableFuture.delayedExecutor(pause, TimeUnit.NANOSECONDS);
                        return CompletableFuture.supplyAsync(() -> null, later)
                                .thenCompose(x -> attempt(attempt + 1, start, deadline, client, retriable, send, decode, giveUp));
                    }
                    long spent = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                    return CompletableFuture.<T>failedFuture(giveUp.apply(cause, spent));
                })
                .thenCompose(f -> f);
    }

    /** Exponential, capped at one second, with full jitter so retrying clients spread out. */
    private static long backoffNanos(int attempt) {
        long cap = TimeUnit.MILLISECONDS.toNanos(Math.min(1000, 50L << Math.min(attempt, 5)));
        return ThreadLocalRandom.current().nextLong(cap / 10, cap + 1);
    }

    /** Refusals Ratis gives before anything is appended: a fresh send cannot apply twice. */
    private static boolean refusedBeforeAppend(Throwable cause) {
        return cause instanceof LeaderSteppingDownException || cause instanceof LeaderNotReadyException
                || cause instanceof NotLeaderException || cause instanceof ServerNotReadyException
                || cause instanceof TransferLeadershipException;
    }

    private CompletableFuture<StaleRead<Optional<Item>>> staleFrom(List<RaftPeer> peers, int i, Query.Get get, Throwable last) {
        if (i == peers.size()) {
            return CompletableFuture.failedFuture(new ClusterUnavailableException(
                    "no node answered a stale read (" + describe(last) + ")", last));
        }
        RaftPeer peer = peers.get(i);
        RaftClient side = sideClient();
        return side.async().sendStaleRead(message(Codec.encodeQuery(get)), 0, peer.getId())
                .orTimeout(options.requestTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .handle((reply, error) -> {
                    if (error == null && reply.isSuccess()) {
                        Item item = ((Result.Found) decodeOne(reply)).item();
                        return CompletableFuture.completedFuture(
                                new StaleRead<Optional<Item>>(Optional.ofNullable(item), peer.getAddress()));
                    }
                    Throwable cause = error != null ? unwrap(error) : reply.getException();
                    if (cause instanceof AlreadyClosedException) {
                        replace(side); // a node's ordered stream failed for good on this client
                    }
                    return staleFrom(peers, i + 1, get, cause);
                })
                .thenCompose(f -> f);
    }

    private static Result decodeOne(RaftClientReply reply) {
        return accepted(Codec.decodeResults(reply.getMessage().getContent().toByteArray()).get(0));
    }

    /** {@code result}, unless it is a {@link Result.Rejected}: then the invalid-request error it stands for. */
    private static Result accepted(Result result) {
        if (result instanceof Result.Rejected r) {
            throw invalid(new InvalidCommandException(r.reason()));
        }
        return result;
    }

    /** A node refuses invalid input with our exception wrapped in Ratis' StateMachineException. */
    private static RatchetException invalidFrom(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof InvalidCommandException e) {
                return invalid(e);
            }
            if (t instanceof StateMachineException && t.getMessage() != null) {
                int at = t.getMessage().indexOf(INVALID_MARKER);
                if (at >= 0) {
                    String rest = t.getMessage().substring(at + INVALID_MARKER.length());
                    int colon = rest.indexOf(": ");
                    return invalid(new InvalidCommandException(colon < 0 ? rest : rest.substring(colon + 2)));
                }
            }
        }
        return null;
    }

    private static InvalidRequestException invalid(InvalidCommandException e) {
        return new InvalidRequestException(e.getMessage(), e);
    }

    private static String toJson(String what, Object value) {
        if (value == null) {
            throw new InvalidCommandException(what + " must not be null");
        }
        return Json.write(value);
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static String describe(Throwable t) {
        if (t == null) {
            return "no detail";
        }
        Throwable root = unwrap(t);
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
