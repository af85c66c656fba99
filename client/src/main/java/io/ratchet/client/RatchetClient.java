package io.ratchet.client;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.GroupName;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Result;
import java.io.IOException;
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
    private volatile boolean closed;

    private RatchetClient(ClientOptions options) {
        this.options = options;
        List<RaftPeer> peers = options.peers().entrySet().stream()
                .map(e -> RaftPeer.newBuilder().setId(e.getKey()).setAddress(e.getValue()).build())
                .toList();
        this.group = RaftGroup.valueOf(GroupName.toGroupId(options.group()), peers);
        raft.set(newRaftClient());
    }

    private RaftClient newRaftClient() {
        RaftProperties properties = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(properties,
                TimeDuration.valueOf(options.requestTimeout().toMillis(), TimeUnit.MILLISECONDS));
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
            if (closed || raft.get() != failed) {
                return;
            }
            raft.set(newRaftClient());
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
        return writeOne(put);
    }

    /** Removes {@code key} if {@code index} equals its current index. */
    public CompletableFuture<CompareExchangeResult> deleteAsync(String key, long index) {
        return writeOne(new Command.Delete(key, index));
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

    // ---- reads

    /** The item under {@code key}, linearizably: it reflects every write acknowledged before the call. */
    public CompletableFuture<Optional<Item>> getAsync(String key) {
        return read(new Query.Get(key)).thenApply(r -> Optional.ofNullable(((Result.Found) r).item()));
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

    public Optional<Item> get(String key) {
        return await(getAsync(key));
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
        synchronized (raft) {
            closed = true;
            last = raft.get();
        }
        closeQuietly(last);
    }

    // ---- the send path

    private CompletableFuture<CompareExchangeResult> writeOne(Command command) {
        return write(List.of(command)).thenApply(results -> {
            Result result = results.get(0);
            if (result instanceof Result.Rejected r) {
                throw invalid(new InvalidCommandException(r.reason()));
            }
            return CompareExchangeResult.of((Result.Write) result);
        });
    }

    /** Sends commands as one request: they enter one log entry and apply in order at its index. */
    CompletableFuture<List<Result>> write(List<Command> commands) {
        try {
            commands.forEach(Command::validate);
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(invalid(e));
        }
        byte[] request = Codec.encodeWriteRequest(commands);
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
        return raft.async().sendReadOnly(message(Codec.encodeQuery(query)))
                .orTimeout(options.operationTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .handle((reply, error) -> decodeOrFail(raft, reply, error, "the read"));
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
        Throwable cause = error != null ? unwrap(error) : reply.getException();
        RatchetException invalid = invalidFrom(cause);
        if (invalid != null) {
            throw invalid;
        }
        replace(raft);
        throw new ClusterUnavailableException(what + " got no answer within " + options.operationTimeout().toSeconds()
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
