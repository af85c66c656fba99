package io.ratchet.client;

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
import java.util.concurrent.atomic.AtomicReference;
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
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.retry.ExponentialBackoffRetry;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
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
    private final GroupCommit<Request> groupCommit = new GroupCommit<>(GroupCommit.WRITES, this::send,
            GroupCommit.DEFAULT_MESSAGES_IN_FLIGHT);
    /**
     * Gets that queue up share one read message and one ReadIndex. One message in flight measured best
     * (16 clients: 10,567 gets/s, against 7,940 with two and 2,248 unbatched; docs/PERFORMANCE.md);
     * {@code ratchet.getBatch.inFlight} overrides it for measurements.
     */
    private final GroupCommit<Query.Get> getBatches = new GroupCommit<>(GroupCommit.GETS, this::sendRead,
            Integer.getInteger("ratchet.getBatch.inFlight", 1));
    private volatile boolean closed;

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
        synchronized (raft) {
            RaftClient client = watchRaft.get();
            if (client == null && !closed) {
                client = newRaftClient(MAX_WATCH.plus(options.requestTimeout()));
                watchRaft.set(client);
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
            } else if (watchRaft.get() == failed) {
                watchRaft.set(null);
            } else {
                return;
            }
        }
        closeQuietly(failed);
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
        if (!(write instanceof Command.Put) && !(write instanceof Command.Delete)) {
            return CompletableFuture.failedFuture(invalid(new InvalidCommandException(
                    "only a put or a delete stands alone; other operations go in a transaction")));
        }
        return submitAsync(Request.of(List.of((Command) write))).thenApply(results -> toWriteResult(results.get(0)));
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
            Result result = results.get(0);
            if (result instanceof Result.Rejected r) {
                throw invalid(new InvalidCommandException(r.reason()));
            }
            Result.Txn txn = (Result.Txn) result;
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
        return getBatches.submit(get).thenApply(results -> {
            if (results.get(0) instanceof Result.Rejected r) {
                throw invalid(new InvalidCommandException(r.reason()));
            }
            return Optional.ofNullable(((Result.Found) results.get(0)).item());
        });
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
        RaftClient watcher = watchClient();
        return watcher.async().sendReadOnlyUnordered(message(Codec.encodeQuery(watch)))
                .orTimeout(timeout.toMillis() + options.operationTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .handle((reply, error) -> {
                    Result.Watched w = (Result.Watched) decodeOrFail(watcher, reply, error, "the watch");
                    return new WatchResult(w.changed(), w.lastChange(), Optional.ofNullable(w.item()));
                });
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
        List<CompletableFuture<NodeStatus>> answers = options.peers().entrySet().stream()
                .map(e -> CompletableFuture.supplyAsync(() -> statusOf(e.getKey(), e.getValue())))
                .toList();
        return answers.stream().map(CompletableFuture::join)
                .sorted(java.util.Comparator.comparing(NodeStatus::id)).toList();
    }

    private NodeStatus statusOf(String id, String address) {
        RaftPeerId peer = RaftPeerId.valueOf(id);
        RaftClient raft = this.raft.get();
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
        RaftClient last;
        RaftClient watcher;
        synchronized (raft) {
            closed = true;
            last = raft.get();
            watcher = watchRaft.getAndSet(null);
        }
        closeQuietly(last);
        if (watcher != null) {
            closeQuietly(watcher);
        }
    }

    // ---- the send path

    private static CompareExchangeResult toWriteResult(Result result) {
        if (result instanceof Result.Rejected r) {
            throw invalid(new InvalidCommandException(r.reason()));
        }
        Result.Write w = (Result.Write) result;
        return new CompareExchangeResult(w.successful(), w.key(), w.item());
    }

    /**
     * Sends a validated request: its commands enter one log entry and apply in order at its index.
     * Requests that queue up while others are in flight share a message and so a log entry.
     */
    private CompletableFuture<List<Result>> write(Request validated) {
        return groupCommit.submit(validated);
    }

    /** Sends one requests message (one or more requests); every failure maps to one exception for all of them. */
    private CompletableFuture<List<Result>> send(byte[] request) {
        RaftClient raft = this.raft.get();
        return raft.async().send(message(request))
                .orTimeout(options.operationTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .handle((reply, error) -> {
                    if (error == null && reply.isSuccess()) {
                        return Codec.decodeResults(reply.getMessage().getContent().toByteArray());
                    }
                    Throwable cause = error != null ? unwrap(error) : reply.getException();
                    RatchetException invalid = invalidFrom(cause);
                    if (invalid != null) {
                        throw invalid;
                    }
                    replace(raft);
                    throw new UnknownOutcomeException("the write got no answer within " + options.operationTimeout().toSeconds()
                            + " s (at most " + options.maxAttempts() + " attempts); it may or may not have been applied ("
                            + describe(cause) + ")", cause);
                });
    }

    CompletableFuture<Result> read(Query query) {
        try {
            query.validate();
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        RaftClient raft = this.raft.get();
        // Unordered: a read need not wait for the replies of other threads' writes sent before it (the
        // ordered stream releases replies in send order). It still reflects every write acknowledged
        // before it was sent, which is what linearizable promises.
        return raft.async().sendReadOnlyUnordered(message(Codec.encodeQuery(query)))
                .orTimeout(options.operationTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .handle((reply, error) -> decodeOrFail(raft, reply, error, "the read"));
    }

    /** Sends one read message (a batch of gets); a failure maps as for any read. */
    private CompletableFuture<List<Result>> sendRead(byte[] query) {
        RaftClient raft = this.raft.get();
        return raft.async().sendReadOnlyUnordered(message(query))
                .orTimeout(options.operationTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .handle((reply, error) -> {
                    if (error == null && reply.isSuccess()) {
                        return Codec.decodeResults(reply.getMessage().getContent().toByteArray());
                    }
                    throw readFailure(raft, reply, error, "the read");
                });
    }

    private CompletableFuture<StaleRead<Optional<Item>>> staleFrom(List<RaftPeer> peers, int i, Query.Get get, Throwable last) {
        if (i == peers.size()) {
            return CompletableFuture.failedFuture(new ClusterUnavailableException(
                    "no node answered a stale read (" + describe(last) + ")", last));
        }
        RaftPeer peer = peers.get(i);
        return raft.get().async().sendStaleRead(message(Codec.encodeQuery(get)), 0, peer.getId())
                .orTimeout(options.requestTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .handle((reply, error) -> {
                    if (error == null && reply.isSuccess()) {
                        Item item = ((Result.Found) decodeOne(reply)).item();
                        return CompletableFuture.completedFuture(
                                new StaleRead<Optional<Item>>(Optional.ofNullable(item), peer.getAddress()));
                    }
                    return staleFrom(peers, i + 1, get, error != null ? unwrap(error) : reply.getException());
                })
                .thenCompose(f -> f);
    }

    private Result decodeOrFail(RaftClient raft, RaftClientReply reply, Throwable error, String what) {
        if (error == null && reply.isSuccess()) {
            return decodeOne(reply);
        }
        throw readFailure(raft, reply, error, what);
    }

    /** What a read that failed reports: invalid input as such, anything else as an unavailable cluster. */
    private RatchetException readFailure(RaftClient raft, RaftClientReply reply, Throwable error, String what) {
        Throwable cause = error != null ? unwrap(error) : reply.getException();
        RatchetException invalid = invalidFrom(cause);
        if (invalid != null) {
            return invalid;
        }
        replace(raft);
        return new ClusterUnavailableException(what + " got no answer within " + options.operationTimeout().toSeconds()
                + " s (at most " + options.maxAttempts() + " attempts): " + describe(cause), cause);
    }

    private static Result decodeOne(RaftClientReply reply) {
        Result result = Codec.decodeResults(reply.getMessage().getContent().toByteArray()).get(0);
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

    private static Message message(byte[] bytes) {
        return Message.valueOf(ByteString.copyFrom(bytes));
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

    /** Waits for a future and rethrows its Ratchet error as is. */
    static <T> T await(CompletableFuture<T> future) {
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
