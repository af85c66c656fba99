package io.ratchet.testing;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.internal.Attempts;
import io.ratchet.client.internal.GrpcConnector;
import io.ratchet.client.internal.Transport.Outcome;
import io.ratchet.client.internal.Transport.Refused;
import io.ratchet.client.internal.Transport.Unanswered;
import io.ratchet.client.internal.Transport;
import io.ratchet.common.Credentials;
import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Refusal;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.Rpc;
import io.ratchet.statemachine.CompareExchangeStore;
import io.ratchet.statemachine.KeyContention;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A cluster in this process, for tests of the client and its recipes that need no Raft: three node
 * addresses in front of one REAL {@link CompareExchangeStore}, reached through the client's own seam
 * ({@link RatchetClient#connect(ClientOptions, Function)} with a {@link Transport.Connector}). Each call is
 * served the way a node's front end ({@code FrontEnd}) and state machine ({@code RatchetStateMachine})
 * serve it, and its answer is encoded and decoded with {@link Codec} exactly as on the wire:
 * <ul>
 *   <li>{@link Rpc#WRITE_CALL}: a batches message of exactly one {@link Batch}, decoded and validated
 *       ({@link Refusal.Reason#INVALID} otherwise, nothing written); refused with
 *       {@link Refusal.Reason#NOT_LEADER} naming the leader at any node but the leader
 *       ({@link Refusal.Reason#NO_LEADER} when there is none); on the leader, wrapped in an
 *       {@link Entry} stamped with the cluster clock, applied with
 *       {@code store.applyEntry(entry, ++index)}, and answered with the encoded results;</li>
 *   <li>{@link Rpc#READ_CALL}: a query message, decoded and validated, answered from the store at any
 *       node (a follower's ReadIndex would ask the leader; here every node shares the one store; a
 *       follower's answer names the leader, {@code Codec.withLeader}), or
 *       refused {@link Refusal.Reason#NO_LEADER} when there is no leader. A {@link Query.Watch} answers
 *       at once when the key changed after its index, else when an applied entry changes it, or when its
 *       timeout passes in real time, with the key's state then;</li>
 *   <li>{@link Rpc#STALE_READ_CALL}: as a read, served even without a leader; a watch is invalid.</li>
 *   <li>{@link Query.Shape}, the client's question before its first keyed call: one group, its leader
 *       not named (the client then finds it by the calls tests watch); answered at once and not counted
 *       among {@link #calls}. A call to another group is refused as invalid.</li>
 * </ul>
 *
 * <p>Time. The cluster clock is manual: it starts at the real wall clock (the lock recipe uses the
 * wall clock as a hint for how long to watch a lease) and moves only by {@link #advance} or
 * {@link #setTime}. Each write's entry is stamped with it, so leases, time-to-lives and client sessions
 * lapse on cluster time, the way the store judges them, without any test sleeping. Watch timeouts,
 * call timeouts and answer delays are real time, like the client's own.
 *
 * <p>Faults: {@link #leader} (the others answer NOT_LEADER with a hint), {@link #down} (connection
 * refused: not delivered), {@link #refuseTls} (a failed TLS handshake: not delivered), {@link #dropAnswers} (applied, then the answer is lost: the in-doubt case),
 * {@link #delayAnswers}, {@link #beforeWrite} (runs before a write applies: another writer getting in
 * first) and {@link #afterWrite} (runs between apply and answer).
 *
 * <p>Another writer: {@link #putItem} and {@link #putDocument} write straight to the store, as one entry
 * each, from the test's thread or from a hook.
 *
 * <p>Threads. Every call is served on one cluster thread, in the order calls were made; answers are
 * completed on it too (outside the store's lock), so client callbacks run there, as they run on gRPC's
 * threads in production. Tests read the store through {@link #read} and the helpers beside it, and what
 * clients sent through {@link #calls} and its filters.
 */
public final class InProcessCluster implements AutoCloseable {
    /** The three nodes: id to client address. */
    public static final Map<String, String> NODES = nodes();
    public static final String N1 = "n1:7001";
    public static final String N2 = "n2:7002";
    public static final String N3 = "n3:7003";

    /** One call as the connector saw it, in the order they were made. */
    public record Call(byte method, String address, byte[] message) {
        public boolean isWrite() {
            return method == Rpc.WRITE_CALL;
        }

        /** The write's requests (across its one batch), or empty for a read or an undecodable message. */
        public List<Request> requests() {
            if (!isWrite()) {
                return List.of();
            }
            try {
                return Codec.decodeBatches(message).stream().flatMap(b -> b.requests().stream()).toList();
            } catch (InvalidCommandException e) {
                return List.of();
            }
        }

        /** Whether this write only opens a client session. */
        public boolean opensSession() {
            List<Request> requests = requests();
            return !requests.isEmpty() && requests.stream()
                    .allMatch(r -> r.commands().stream().allMatch(c -> c instanceof Command.OpenSession));
        }
    }

    private record PendingWatch(Query.Watch watch, CompletableFuture<Outcome> outcome) {
    }

    private final Object lock = new Object();
    /** Guarded by {@link #lock}, like the state machine's store. */
    private final CompareExchangeStore store = new CompareExchangeStore();
    /** The refused conditions per key, as a node counts them (not replicated state: one count for the cluster here). */
    private final KeyContention contention;
    /** The last log index handed out; guarded by {@link #lock}. */
    private long index;
    /** Guarded by {@link #lock}. */
    private final List<PendingWatch> watches = new ArrayList<>();

    private final AtomicLong clock = new AtomicLong(System.currentTimeMillis());
    private final ScheduledThreadPoolExecutor thread;
    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();
    private final List<RatchetClient> clients = new CopyOnWriteArrayList<>();
    private final List<Connector> connectors = new CopyOnWriteArrayList<>();
    private final Set<String> down = ConcurrentHashMap.newKeySet();
    private final Set<String> tlsRefusing = ConcurrentHashMap.newKeySet();
    private final Set<String> holding = ConcurrentHashMap.newKeySet();
    private final List<CompletableFuture<Outcome>> held = new CopyOnWriteArrayList<>();
    private final AtomicInteger answersToDrop = new AtomicInteger();
    private final AtomicInteger writesApplied = new AtomicInteger();
    private final AtomicInteger transactionsCommitted = new AtomicInteger();
    private volatile String leader = N1;
    private volatile Duration answerDelay = Duration.ZERO;
    private volatile Runnable beforeWrite = () -> { };
    private volatile Runnable afterWrite = () -> { };

    public InProcessCluster() {
        thread = new ScheduledThreadPoolExecutor(1, DaemonThreads.named("in-process-cluster"));
        thread.setRemoveOnCancelPolicy(true);
        contention = new KeyContention(clock.get());
        store.countContentionIn(contention);
    }

    private static Map<String, String> nodes() {
        Map<String, String> nodes = new LinkedHashMap<>();
        nodes.put("n1", "n1:7001");
        nodes.put("n2", "n2:7002");
        nodes.put("n3", "n3:7003");
        return java.util.Collections.unmodifiableMap(nodes);
    }

    // ---- clients

    /**
     * Options for a client of {@code addresses} (all three nodes when none are given), with bounds short
     * enough for tests: 1 s per attempt, 3 unanswered attempts, 3 s per operation.
     */
    public static ClientOptions options(String... addresses) {
        Map<String, String> peers = new LinkedHashMap<>();
        if (addresses.length == 0) {
            peers.putAll(NODES);
        } else {
            for (String a : addresses) {
                peers.put(a.substring(0, a.indexOf(':')), a);
            }
        }
        return new ClientOptions(peers, "ratchet", Duration.ofSeconds(1), 3, Duration.ofSeconds(3),
                ClientOptions.DEFAULT_SESSION_TIMEOUT, Credentials.NONE);
    }

    /** A client of all three nodes, closed with the cluster. */
    public RatchetClient client() {
        return client(options());
    }

    /** A client with these options, wired to this cluster; closed with the cluster. */
    public RatchetClient client(ClientOptions options) {
        RatchetClient client = RatchetClient.connect(options, Connector::new);
        clients.add(client);
        return client;
    }

    /**
     * A connector to this cluster for code that builds its own {@link Transport} (a test of
     * {@link Attempts} alone); closed with the cluster.
     */
    public Transport.Connector connector() {
        Connector connector = new Connector(null);
        connectors.add(connector);
        return connector;
    }

    // ---- the clock

    /** The cluster clock: what the next write's entry is stamped with (epoch millis). */
    public long now() {
        return clock.get();
    }

    public void advance(Duration by) {
        clock.addAndGet(by.toMillis());
    }

    /** Sets the clock; cluster time never goes back (the store keeps the greatest stamp). */
    public void setTime(long epochMillis) {
        clock.set(epochMillis);
    }

    // ---- faults

    /** Makes {@code address} the leader; every other node refuses writes with NOT_LEADER naming it. Null: no leader. */
    public void leader(String address) {
        if (address != null && !NODES.containsValue(address)) {
            throw new IllegalArgumentException("no node at " + address);
        }
        leader = address;
    }

    public String leader() {
        return leader;
    }

    /** Calls to {@code address} fail as a refused connection: never delivered, nothing applied. */
    public void down(String address) {
        down.add(address);
    }

    public void up(String address) {
        down.remove(address);
        holding.remove(address);
        tlsRefusing.remove(address);
    }

    /**
     * Calls to {@code address} are delivered and never answered (each ends at its timeout): a leader that
     * handed leadership over while starved of CPU, holding the calls it had.
     */
    public void hold(String address) {
        holding.add(address);
    }

    /** Calls {@link #hold} took that have not ended yet. */
    public long heldUnanswered() {
        return held.stream().filter(f -> !f.isDone()).count();
    }

    /** Connections to {@code address} fail their TLS handshake (not delivered), as with a CA that does not fit. */
    public void refuseTls(String address) {
        tlsRefusing.add(address);
    }

    /** The next {@code n} writes the leader applies lose their answer (unanswered, delivered): in doubt. */
    public void dropAnswers(int n) {
        answersToDrop.set(n);
    }

    /** Every answer from now on arrives {@code delay} after the node served the call (ZERO: at once). */
    public void delayAnswers(Duration delay) {
        answerDelay = delay;
    }

    /**
     * Runs on the cluster thread before the leader applies each write (a client's session open and its
     * resends included, as for {@link #afterWrite}): another writer getting in first, with
     * {@link #putItem} or {@link #putDocument}. Null: none.
     */
    public void beforeWrite(Runnable hook) {
        beforeWrite = hook == null ? () -> { } : hook;
    }

    /** Runs on the cluster thread after each write is applied, before its answer goes out. */
    public void afterWrite(Runnable hook) {
        afterWrite = hook == null ? () -> { } : hook;
    }

    // ---- another writer

    /**
     * Another writer puts {@code json} under {@code key} whatever the item's index, as one entry stamped
     * with the cluster clock; watches of the key wake up. Applied at once on the calling thread (a
     * {@link #beforeWrite} hook's too). Returns the entry's index: the item's new index.
     *
     * @throws IllegalArgumentException when the store refuses the put (an invalid key or value)
     */
    public long putItem(String key, String json) {
        return writeDirectly(store -> {
            Item current = store.get(key);
            return new Command.Put(key, json, current == null ? 0 : current.index(), null);
        });
    }

    /**
     * Another writer stores the JSON object {@code json} as document {@code id} whatever its guard index,
     * in a transaction of its own, as {@link #putItem} puts an item. Returns the entry's index: the
     * document's new guard index.
     *
     * @throws IllegalArgumentException when the store refuses it (an invalid id, or not a JSON object)
     */
    public long putDocument(String id, String json) {
        return writeDirectly(store -> {
            Item guard = store.get(Document.guardKey(id));
            return new Command.Transaction(List.of(new Command.PutDocument(id, json, guard == null ? 0 : guard.index())));
        });
    }

    /** Applies the command {@code at} makes from the store, as one untagged entry, under the store's lock. */
    private long writeDirectly(Function<CompareExchangeStore, Command> at) {
        Result result;
        long entry;
        List<Runnable> wakeups;
        synchronized (lock) {
            Command command = at.apply(store);
            entry = ++index;
            result = store.applyEntry(Entry.untagged(clock.get(), List.of(Request.of(List.of(command)))), entry).get(0);
            writesApplied.incrementAndGet();
            wakeups = fired();
        }
        wakeups.forEach(Runnable::run);
        if (!(result instanceof Result.Write w && w.successful()) && !(result instanceof Result.Txn t && t.successful())) {
            throw new IllegalArgumentException("the store refused the write: " + result);
        }
        return entry;
    }

    // ---- looking inside

    /** Reads the store under its lock: for assertions. */
    public <T> T read(Function<CompareExchangeStore, T> reader) {
        synchronized (lock) {
            return reader.apply(store);
        }
    }

    public Optional<Item> item(String key) {
        return Optional.ofNullable(read(s -> s.get(key)));
    }

    public Optional<Document> document(String id) {
        return Optional.ofNullable(read(s -> s.document(id)));
    }

    /** The index of the last entry applied (0 before any). */
    public long lastIndex() {
        synchronized (lock) {
            return index;
        }
    }

    /** Cluster time as the store knows it: the greatest stamp applied. */
    public long clusterTime() {
        return read(CompareExchangeStore::clusterTime);
    }

    /** Every call any client made, in order. */
    public List<Call> calls() {
        return List.copyOf(calls);
    }

    public List<Call> writeCalls() {
        return calls.stream().filter(Call::isWrite).toList();
    }

    /** Every read call (linearizable or stale, watches included) any client made, in order. */
    public List<Call> readCalls() {
        return calls.stream().filter(c -> c.method() == Rpc.READ_CALL || c.method() == Rpc.STALE_READ_CALL).toList();
    }

    /**
     * The operations of every transaction clients sent, in the order of their calls: a message the client
     * resent after a lost answer appears once for each call.
     */
    public List<List<Command.Op>> transactionsSent() {
        return writeCalls().stream().flatMap(c -> c.requests().stream()).flatMap(r -> r.commands().stream())
                .filter(Command.Transaction.class::isInstance).map(c -> ((Command.Transaction) c).ops()).toList();
    }

    /** How many write entries the leader applied (resends and {@link #putItem}-style writes included: each is an entry). */
    public int writesApplied() {
        return writesApplied.get();
    }

    /**
     * How many clients' transactions the store committed: a refused one is not counted, nor a resend it
     * answered with the first outcome (by client session or idempotency key), so this counts each once.
     */
    public int transactionsCommitted() {
        return transactionsCommitted.get();
    }

    /** Watches registered and not yet answered. */
    public int pendingWatches() {
        synchronized (lock) {
            watches.removeIf(w -> w.outcome().isDone());
            return watches.size();
        }
    }

    /**
     * What the leader's sweeper does: proposes the items expired at the clock's time, in one entry
     * stamped with it. Returns how many the store removed.
     */
    public int sweep() {
        return onClusterThread(() -> {
            List<Runnable> wakeups;
            Result result;
            synchronized (lock) {
                List<Command.KeyIndex> due = store.expiredAt(clock.get(), Command.Sweep.MAX_CANDIDATES);
                if (due.isEmpty()) {
                    return 0;
                }
                Entry entry = Entry.untagged(clock.get(), List.of(Request.of(List.of(new Command.Sweep(due)))));
                result = store.applyEntry(entry, ++index).get(0);
                writesApplied.incrementAndGet();
                wakeups = fired();
            }
            wakeups.forEach(Runnable::run);
            return ((Result.Swept) result).removed();
        });
    }

    @Override
    public void close() {
        clients.forEach(RatchetClient::close);
        connectors.forEach(Connector::close);
        thread.shutdownNow();
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError("the in-process cluster failed to serve " + errors.size() + " call(s)",
                    errors.get(0));
            errors.stream().skip(1).forEach(e::addSuppressed);
            throw e;
        }
    }

    // ---- serving

    /** One client's connector: what {@link GrpcConnector} is in production. */
    private final class Connector implements Transport.Connector {
        private final Set<CompletableFuture<Outcome>> pending = ConcurrentHashMap.newKeySet();
        private volatile boolean closed;

        Connector(ScheduledExecutorService clientTimers) {
            // The cluster's own thread keeps the time for its calls; the client's timers are its own.
        }

        @Override
        public CompletableFuture<Outcome> call(byte method, int group, String address, byte[] message, Duration timeout) {
            if (method == Rpc.READ_CALL && isShapeQuery(message)) {
                // The client's one question before its first keyed call: answered, and not counted among calls. It
                // names no leader, so a client finds the leader by the calls tests watch (a refusal's hint).
                return CompletableFuture.completedFuture(new Transport.Answered(
                        Codec.encodeResults(List.of(new Result.Shape(List.of("")))), null));
            }
            calls.add(new Call(method, address, message));
            if (group != 0) {
                return CompletableFuture.completedFuture(new Refused(
                        Refusal.invalid("the in-process cluster has one group, not group " + group)));
            }
            if (closed) {
                return CompletableFuture.completedFuture(new Unanswered("the client is closed", false));
            }
            CompletableFuture<Outcome> outcome = new CompletableFuture<>();
            pending.add(outcome);
            outcome.whenComplete((o, e) -> pending.remove(outcome));
            try {
                ScheduledFuture<?> timer = thread.schedule(() -> outcome.complete(new Unanswered("timed out", true)),
                        timeout.toNanos(), TimeUnit.NANOSECONDS);
                outcome.whenComplete((o, e) -> timer.cancel(false));
                thread.execute(() -> serve(method, address, message, outcome));
            } catch (RejectedExecutionException e) {
                outcome.complete(new Unanswered("the cluster is closed", false));
            }
            return outcome;
        }

        private static boolean isShapeQuery(byte[] message) {
            try {
                return Codec.decodeQuery(message) instanceof Query.Shape;
            } catch (RuntimeException e) {
                return false;
            }
        }

        @Override
        public void close() {
            closed = true;
            for (CompletableFuture<Outcome> p : List.copyOf(pending)) {
                p.complete(new Unanswered("the client is closed", true));
            }
        }
    }

    private void serve(byte method, String address, byte[] message, CompletableFuture<Outcome> outcome) {
        try {
            if (!NODES.containsValue(address) || down.contains(address)) {
                outcome.complete(new Unanswered("UNAVAILABLE: connection refused by " + address, false));
                return;
            }
            if (holding.contains(address)) {
                held.add(outcome);
                return;
            }
            if (tlsRefusing.contains(address)) {
                outcome.complete(new Unanswered("the node's certificate is not trusted with the CA file ca.pem", false, true));
                return;
            }
            switch (method) {
                case Rpc.WRITE_CALL -> write(address, message, outcome);
                case Rpc.READ_CALL -> read(address, message, outcome, false);
                case Rpc.STALE_READ_CALL -> read(address, message, outcome, true);
                default -> answer(outcome, Codec.encodeRefusal(Refusal.invalid("unknown call method " + method)));
            }
        } catch (Throwable t) {
            errors.add(t);
            outcome.complete(new Refused(Refusal.unavailable("the in-process cluster failed: " + t)));
        }
    }

    /** As FrontEnd.write, then RatchetStateMachine.startTransaction and applyTransaction. */
    private void write(String address, byte[] message, CompletableFuture<Outcome> outcome) {
        List<Batch> batches;
        try {
            if (message.length > Limits.MAX_REQUEST_BYTES) {
                throw new InvalidCommandException("request is " + message.length + " bytes; the limit is "
                        + Limits.MAX_REQUEST_BYTES);
            }
            batches = Codec.decodeBatches(message);
            if (batches.size() != 1) {
                throw new InvalidCommandException("a write message carries one batch, not " + batches.size());
            }
            batches.get(0).validate();
        } catch (InvalidCommandException e) {
            answer(outcome, Codec.encodeRefusal(Refusal.invalid(e.getMessage())));
            return;
        }
        String lead = leader;
        if (lead == null) {
            answer(outcome, Codec.encodeRefusal(Refusal.noLeader("no leader is known to node " + id(address) + " yet")));
            return;
        }
        if (!lead.equals(address)) {
            answer(outcome, Codec.encodeRefusal(Refusal.notLeader(id(lead), lead)));
            return;
        }
        beforeWrite.run();
        List<Result> results;
        List<Runnable> wakeups;
        long entry;
        synchronized (lock) {
            entry = ++index;
            results = store.applyEntry(new Entry(clock.get(), batches), entry);
            writesApplied.incrementAndGet();
            wakeups = fired();
        }
        // A resend answered from the first outcome carries that outcome's index, not this entry's.
        transactionsCommitted.addAndGet((int) results.stream()
                .filter(r -> r instanceof Result.Txn t && t.successful() && t.index() == entry).count());
        wakeups.forEach(Runnable::run);
        afterWrite.run();
        if (answersToDrop.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0) {
            outcome.complete(new Unanswered("UNAVAILABLE: the stream broke before the answer arrived", true));
            return;
        }
        answer(outcome, Codec.encodeResults(results));
    }

    /** As FrontEnd.read / staleRead, then RatchetStateMachine.query. */
    private void read(String address, byte[] message, CompletableFuture<Outcome> outcome, boolean stale) {
        Query query;
        try {
            query = Codec.decodeQuery(message);
            query.validate();
            if (stale && query instanceof Query.Watch) {
                throw new InvalidCommandException("a watch is not a stale read");
            }
        } catch (InvalidCommandException e) {
            answer(outcome, Codec.encodeRefusal(Refusal.invalid(e.getMessage())));
            return;
        }
        if (!stale && leader == null) {
            answer(outcome, Codec.encodeRefusal(Refusal.noLeader("no leader to confirm a linearizable read")));
            return;
        }
        List<Result> results;
        synchronized (lock) {
            if (query instanceof Query.Watch w) {
                Result.Watched now = watchAnswer(w);
                if (!now.changed()) {
                    PendingWatch pending = new PendingWatch(w, outcome);
                    watches.add(pending);
                    thread.schedule(() -> timedOut(pending), w.timeoutMillis(), TimeUnit.MILLISECONDS);
                    return;
                }
                results = List.of(now);
            } else if (query instanceof Query.Gets gets) {
                results = gets.gets().stream().map(this::answerOf).toList();
            } else if (query instanceof Query.Contention c) {
                results = List.of(contention.answer(c.limit()));
            } else {
                results = List.of(answerOf(query));
            }
        }
        byte[] encoded = Codec.encodeResults(results);
        String leaderNow = leader;
        answer(outcome, stale || leaderNow == null || leaderNow.equals(address) ? encoded : Codec.withLeader(encoded, leaderNow));
    }

    /** Under the lock. */
    private Result answerOf(Query query) {
        return store.answer(query, index);
    }

    /** Under the lock. */
    private Result.Watched watchAnswer(Query.Watch w) {
        return store.watched(w);
    }

    /** Under the lock, after an entry applied: answers for the watches whose key changed, to run after it. */
    private List<Runnable> fired() {
        List<Runnable> wakeups = new ArrayList<>();
        watches.removeIf(p -> {
            if (p.outcome().isDone()) {
                return true;
            }
            Result.Watched now = watchAnswer(p.watch());
            if (now.changed()) {
                byte[] answer = Codec.encodeResults(List.of(now));
                wakeups.add(() -> answer(p.outcome(), answer));
                return true;
            }
            return false;
        });
        return wakeups;
    }

    private void timedOut(PendingWatch pending) {
        byte[] answer;
        synchronized (lock) {
            if (!watches.remove(pending)) {
                return;
            }
            answer = Codec.encodeResults(List.of(watchAnswer(pending.watch())));
        }
        answer(pending.outcome(), answer);
    }

    /** Sends an answer as a node's front end would, read back as {@link GrpcConnector} reads it. */
    private void answer(CompletableFuture<Outcome> outcome, byte[] bytes) {
        Outcome decoded = Transport.outcomeOf(bytes);
        Duration delay = answerDelay;
        if (delay.isZero()) {
            outcome.complete(decoded);
        } else {
            Outcome late = decoded;
            thread.schedule(() -> outcome.complete(late), delay.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    private <T> T onClusterThread(java.util.concurrent.Callable<T> task) {
        try {
            return thread.submit(task).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("the cluster thread failed", e);
        }
    }

    private static String id(String address) {
        return NODES.entrySet().stream().filter(e -> e.getValue().equals(address)).map(Map.Entry::getKey)
                .findFirst().orElse(address);
    }
}
