package io.ratchet.statemachine;

import io.ratchet.protocol.AuthTable;
import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.RaftBytes;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongSupplier;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Ratis adapter around {@link CompareExchangeStore}: it validates and stamps requests on the
 * leader, decodes log entries and hands them to the store, serves queries, and writes and loads
 * snapshots. Every line here is about Raft; the semantics live in the store.
 */
public final class RatchetStateMachine extends BaseStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(RatchetStateMachine.class);

    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    /**
     * The newest snapshot this node wrote or loaded, or null before the first. Ratis asks for it on
     * every append, on the leader (each follower's appender) and on each follower; the storage's own
     * getter lists the snapshot directory again on every call while there is none.
     */
    private volatile SingleFileSnapshotInfo latestSnapshot;
    /** Apply holds the write lock; queries the read lock, so a reader never sees half an entry. */
    private final ReadWriteLock lock = new ReentrantReadWriteLock();
    private final LongSupplier leaderClock;
    private final Watches watches = new Watches();
    private CompareExchangeStore store = new CompareExchangeStore();
    private final KeyContention contention = new KeyContention(System.currentTimeMillis());
    private volatile ApplyListener applyListener = ApplyListener.NONE;
    private final QuotaAlarm quotaAlarm = new QuotaAlarm();
    /** The state's size and quota after the last entry: read without the lock by status and metrics. */
    private volatile Result.Quota quota = new Result.Quota(0, Limits.DEFAULT_QUOTA_BYTES);
    private volatile boolean quotaSet;
    /** The permission table after the last entry: read without the lock by every call's check. */
    private volatile AuthTable auth = AuthTable.EMPTY;
    /** This process's heap, against which a quota is checked (see {@link HeapBudget}). */
    private final long maxHeap = Runtime.getRuntime().maxMemory();

    public RatchetStateMachine() {
        this(System::currentTimeMillis);
    }

    /** @param leaderClock the clock that stamps entries on the leader (never read during apply) */
    public RatchetStateMachine(LongSupplier leaderClock) {
        this.leaderClock = leaderClock;
        store.countContentionIn(contention);
    }

    @Override
    public StateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        getLifeCycle().startAndTransition(() -> {
            super.initialize(server, groupId, raftStorage);
            storage.init(raftStorage);
            loadLatestSnapshot();
        }, IOException.class);
    }

    /**
     * The snapshot loaded at start, after an install from the leader, or last written. Never a
     * directory listing: until the first snapshot, that listing ran on every append, on each node
     * (its cost is in docs/PERFORMANCE.md). A snapshot arrives on disk only through {@link #takeSnapshot} or an
     * install, and Ratis calls {@link #reinitialize} after an install before it asks again.
     */
    @Override
    public SingleFileSnapshotInfo getLatestSnapshot() {
        return latestSnapshot;
    }

    /** Ratis pauses the machine before it swaps in a snapshot installed from the leader. */
    @Override
    public void pause() {
        lock.writeLock().lock();
        try {
            if (getLifeCycleState() == LifeCycle.State.RUNNING) {
                getLifeCycle().transition(LifeCycle.State.PAUSING);
                getLifeCycle().transition(LifeCycle.State.PAUSED);
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Called after a snapshot was installed from the leader: the state is replaced wholesale. */
    @Override
    public void reinitialize() throws IOException {
        loadLatestSnapshot();
        if (getLifeCycleState() == LifeCycle.State.PAUSED) {
            getLifeCycle().transition(LifeCycle.State.STARTING);
            getLifeCycle().transition(LifeCycle.State.RUNNING);
        }
    }

    /** Loads the newest snapshot on disk (not Ratis' cached one, which an install has just outdated). */
    private void loadLatestSnapshot() throws IOException {
        SingleFileSnapshotInfo snapshot = storage.loadLatestSnapshot();
        if (snapshot == null) {
            latestSnapshot = null;
            return;
        }
        File file = snapshot.getFile().getPath().toFile();
        if (snapshot.getFile().getFileDigest() != null) {
            // Ratis' own digest guards the transfer; ours (inside the file) guards the content.
            MD5FileUtil.verifySavedMD5(file, snapshot.getFile().getFileDigest());
        }
        long started = System.nanoTime();
        CompareExchangeStore loaded = SnapshotFile.read(file.toPath());
        List<Runnable> wakeups;
        lock.writeLock().lock();
        try {
            store = loaded;
            store.countContentionIn(contention);
            quota = new Result.Quota(store.used(), store.quota());
            quotaSet = store.quotaSet();
            auth = store.auth();
            setLastAppliedTermIndex(snapshot.getTermIndex());
            latestSnapshot = snapshot;
            // No entry says what changed: the whole store did, so every waiting watch is looked at.
            wakeups = watches.firedByAnyChange(store);
        } finally {
            lock.writeLock().unlock();
        }
        wakeups.forEach(Runnable::run);
        LOG.info("loaded snapshot {}: {} items, {} bytes of quota used, cluster time {}, in {} ms", file.getName(),
                loaded.size(), loaded.used(), loaded.clusterTime(), (System.nanoTime() - started) / 1_000_000);
    }

    /**
     * Runs on the leader before anything is appended: a bad request is refused here with a clear
     * message, so it never enters the log; a good one is stamped with the leader's clock.
     */
    @Override
    public TransactionContext startTransaction(RaftClientRequest request) {
        TransactionContext.Builder context = TransactionContext.newBuilder()
                .setStateMachine(this)
                .setClientRequest(request);
        try {
            ByteString content = request.getMessage().getContent();
            if (content.size() > Limits.MAX_REQUEST_BYTES) {
                throw new InvalidCommandException("request is " + content.size() + " bytes; the limit is "
                        + Limits.MAX_REQUEST_BYTES);
            }
            List<Batch> batches = Codec.decodeProposal(content.toByteArray());
            if (batches.isEmpty()) {
                throw new InvalidCommandException("a write carries at least one request");
            }
            batches.forEach(Batch::validate);
            checkQuotasFitHeap(batches);
            Entry entry = new Entry(leaderClock.getAsLong(), batches);
            return context.setLogData(RaftBytes.wrap(Codec.encodeEntry(entry))).build();
        } catch (InvalidCommandException e) {
            TransactionContext refused = context.build();
            refused.setException(e);
            return refused;
        }
    }

    /** Tells {@code listener} of every entry applied from now on (the node's metrics); replaces the last one. */
    public void listenToApplies(ApplyListener listener) {
        this.applyListener = listener;
    }

    /**
     * A quota this leader's heap could not hold is refused before it is appended. (Followers are checked
     * when they start; one that applies a quota beyond its heap logs it as an error.)
     */
    private void checkQuotasFitHeap(List<Batch> batches) {
        for (Batch batch : batches) {
            for (Request request : batch.requests()) {
                for (Command command : request.commands()) {
                    if (command instanceof Command.SetQuota q) {
                        String tooSmall = HeapBudget.refusal(q.bytes(), maxHeap);
                        if (tooSmall != null) {
                            throw new InvalidCommandException("the leader refuses the quota: " + tooSmall);
                        }
                    }
                }
            }
        }
    }

    /**
     * The results apply would give {@code batch} now if it is all writes refused for the quota (see
     * {@link CompareExchangeStore#refusalsForQuota}); null when it should go to the log. For the leader's
     * front end, so that a full cluster does not spend a log entry on every write it refuses.
     */
    public List<Result> refusalsForQuota(Batch batch) {
        if (!quota.alarm()) {
            return null; // far from full: nothing to refuse, and no read lock taken on the write path
        }
        lock.readLock().lock();
        try {
            return store.refusalsForQuota(batch);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The state's size and its quota after the last entry applied (or snapshot loaded). */
    public Result.Quota quota() {
        return quota;
    }

    /**
     * Why this node's heap cannot hold the quota its state has (loaded from its snapshot, or applied),
     * or null when it can or when no quota was set through the log yet (the node's own is checked then).
     */
    public String heapTooSmall() {
        return quotaSet ? HeapBudget.refusal(quota.quota(), maxHeap) : null;
    }

    /** Who may do what, as of the last entry applied (or snapshot loaded). */
    public AuthTable authTable() {
        return auth;
    }

    /** Whether a quota was ever set through the log (else the protocol's default holds). */
    public boolean quotaSet() {
        return quotaSet;
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        // Read for the apply listener's latency only; no state depends on it (cluster time comes from stamps).
        long started = System.nanoTime();
        LogEntryProto logEntry = trx.getLogEntry();
        long index = logEntry.getIndex();
        Entry entry = null;
        try {
            entry = Codec.decodeEntry(logEntry.getStateMachineLogEntry().getLogData().toByteArray());
        } catch (InvalidCommandException e) {
            // Cannot come from our leader; a node must still not die on it. Every replica refuses alike.
            LOG.error("log entry {} cannot be decoded; it changes nothing: {}", index, e.getMessage());
        }
        List<Result> results;
        List<Runnable> wakeups;
        lock.writeLock().lock();
        try {
            results = entry == null
                    ? List.of(new Result.Rejected("log entry " + index + " cannot be decoded"))
                    : store.applyEntry(entry, index);
            updateLastAppliedTermIndex(logEntry.getTerm(), index);
            Result.Quota before = quota;
            quota = new Result.Quota(store.used(), store.quota());
            quotaSet = store.quotaSet();
            auth = store.auth();
            if (quota.quota() != before.quota() && HeapBudget.refusal(quota.quota(), maxHeap) != null) {
                LOG.error("entry {} set a quota this node cannot hold: {}", index,
                        HeapBudget.refusal(quota.quota(), maxHeap));
            }
            quotaAlarm.observe(quota.used(), quota.quota(), results);
            // Only the watches this entry can have answered (the keys it changed), never all of them.
            wakeups = entry == null ? List.of() : watches.fired(store);
        } finally {
            lock.writeLock().unlock();
        }
        wakeups.forEach(Runnable::run);
        if (entry != null) {
            tellApplied(entry, results, System.nanoTime() - started);
        }
        return CompletableFuture.completedFuture(RaftBytes.message(Codec.encodeResults(results)));
    }

    private void tellApplied(Entry entry, List<Result> results, long nanos) {
        try {
            applyListener.applied(entry, results, nanos);
        } catch (RuntimeException e) {
            LOG.warn("apply listener failed; the entry is applied all the same", e);
        }
    }

    @Override
    public CompletableFuture<Message> query(Message request) {
        Query query;
        try {
            query = Codec.decodeQuery(request.getContent().toByteArray());
            query.validate();
        } catch (InvalidCommandException e) {
            // Ratis keeps the client's stream open only for StateMachineException.
            return CompletableFuture.failedFuture(
                    new StateMachineException(RaftGroupMemberId.valueOf(getId(), getGroupId()), e));
        }
        CompletableFuture<List<Result>> results;
        lock.readLock().lock();
        try {
            if (query instanceof Query.Gets batch) {
                // One answer per get, all from the same applied state: as if each were served alone then.
                results = CompletableFuture.completedFuture(batch.gets().stream().map(this::read).toList());
            } else if (query instanceof Query.Watch w) {
                results = watch(w).thenApply(List::of);
            } else if (query instanceof Query.Contention c) {
                results = CompletableFuture.completedFuture(List.of(new Result.Contention(contention.since(),
                        contention.hottest(c.limit()).stream().map(k -> new Result.KeyContention(k.key(), k.attempts(),
                                k.commits(), k.refused())).toList())));
            } else {
                results = CompletableFuture.completedFuture(List.of(read(query)));
            }
        } finally {
            lock.readLock().unlock();
        }
        return results.thenApply(r -> RaftBytes.message(Codec.encodeResults(r)));
    }

    /** Under the read lock: answers now if the key changed after the index, else waits for apply or the timeout. */
    private CompletableFuture<Result.Watched> watch(Query.Watch w) {
        Result.Watched now = watchAnswer(w);
        if (now.changed()) {
            return CompletableFuture.completedFuture(now);
        }
        return watches.register(w, timedOut -> {
            lock.readLock().lock();
            try {
                return watchAnswer(timedOut);
            } finally {
                lock.readLock().unlock();
            }
        });
    }

    private Result.Watched watchAnswer(Query.Watch w) {
        return store.watched(w);
    }

    /**
     * Items that have expired at {@code time} by the leader's clock, for the sweeper to propose; apply
     * re-checks each against cluster time.
     */
    public List<Command.KeyIndex> expiredAt(long time, int limit) {
        lock.readLock().lock();
        try {
            return store.expiredAt(time, limit);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The keys whose conditions were refused most since this node started (see {@link KeyContention}). */
    public KeyContention contention() {
        return contention;
    }

    /** Open client sessions in this node's applied state. */
    public int sessionCount() {
        lock.readLock().lock();
        try {
            return store.sessionCount();
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public void close() throws IOException {
        watches.close();
        super.close();
    }

    /**
     * Serves a read from local state once this node has applied {@code minIndex}. (Ratis' default parks
     * the read on a future that its own apply path does not complete, so it is replaced here.)
     */
    @Override
    public CompletableFuture<Message> queryStale(Message request, long minIndex) {
        TermIndex applied = getLastAppliedTermIndex();
        long index = applied == null ? 0 : applied.getIndex();
        if (index < minIndex) {
            return CompletableFuture.failedFuture(new StateMachineException("node has applied " + index
                    + ", not yet " + minIndex));
        }
        return query(request);
    }

    private Result read(Query query) {
        TermIndex applied = getLastAppliedTermIndex();
        return store.answer(query, applied == null ? 0 : applied.getIndex());
    }

    /**
     * Writes the whole state to {@code target} as a snapshot file, for a backup, and returns the term and
     * index it holds. Under the read lock, as for a snapshot: apply waits until it is written.
     */
    public TermIndex writeState(Path target) throws IOException {
        lock.readLock().lock();
        try {
            // Read under the lock: the store holds every entry up to it and none after. (Configuration entries
            // move it without the lock, but they change nothing in the store.)
            TermIndex applied = getLastAppliedTermIndex();
            SnapshotFile.write(store, target);
            return applied;
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Runs on the thread that applies entries, so the store does not change while it is written;
     * queries go on under the read lock meanwhile.
     */
    @Override
    public long takeSnapshot() throws IOException {
        TermIndex last = null;
        lock.readLock().lock();
        try {
            last = getLastAppliedTermIndex();
            if (last == null || last.getIndex() <= 0) {
                return -1;
            }
            File file = storage.getSnapshotFile(last.getTerm(), last.getIndex());
            long started = System.nanoTime();
            SnapshotFile.write(store, file.toPath());
            // Ratis ships the MD5 side file with a snapshot it installs on a lagging follower. It is written
            // last: Ratis takes the newest snapshot that has one as complete.
            MD5Hash digest = MD5FileUtil.computeAndSaveMd5ForFile(file);
            SingleFileSnapshotInfo written = new SingleFileSnapshotInfo(new FileInfo(file.toPath(), digest), last);
            storage.updateLatestSnapshot(written);
            latestSnapshot = written;
            LOG.info("wrote snapshot {}: {} items, {} bytes, in {} ms", file.getName(), store.size(), file.length(),
                    (System.nanoTime() - started) / 1_000_000);
        } catch (RuntimeException e) {
            // Anything but an IOException here would shut the Raft group down on this node.
            throw new IOException("snapshot at " + last + " failed: " + e.getMessage(), e);
        } finally {
            lock.readLock().unlock();
        }
        return last.getIndex();
    }
}
