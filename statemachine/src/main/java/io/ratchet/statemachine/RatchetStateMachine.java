package io.ratchet.statemachine;

import io.ratchet.protocol.AuthTable;
import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.NewerFormatException;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.RaftBytes;
import io.ratchet.protocol.Result;
import io.ratchet.statemachine.kv.RocksKeyValueStore;
import io.ratchet.statemachine.kv.StorageException;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotResult;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.exceptions.ServerNotReadyException;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.impl.LogConfigurations;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
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
 * leader, decodes log entries and hands them to the store, serves queries, and keeps the store on disk
 * in step with Raft. Every line here is about Raft; the semantics live in the store.
 *
 * <p>The state lives in a RocksDB store in the group's {@code sm/db}, written once per entry with the
 * entry's term and index, and without RocksDB's own log: the Raft log is the write-ahead log. So a node
 * restarts from its store as it is on disk, at whatever entry its last flush holds, and Ratis applies the
 * log after it. A "snapshot" is the position up to which the store is flushed: taking one asks RocksDB to
 * flush and reports the position of the last flush that completed, and Ratis purges its log up to there,
 * never further than what is on disk. A follower the leader's log no longer reaches fetches a checkpoint
 * of the leader's store ({@link SnapshotSource}) and swaps it in.
 */
public final class RatchetStateMachine extends BaseStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(RatchetStateMachine.class);
    /** The store, in the state machine's directory. */
    public static final String DB = "db";
    /** A fetched checkpoint, complete and verified, waiting for Ratis to swap it in. */
    static final String INSTALL = "install";
    private static final String INSTALLING = "install.tmp";
    /** The store being replaced while a checkpoint is swapped in. */
    private static final String REPLACED = "db.old";
    /** A heap-format snapshot being converted. */
    private static final String CONVERTING = "db.import";

    private final DiskStateStorage storage = new DiskStateStorage(this::getLatestSnapshot);
    /** Apply holds the write lock; queries the read lock, so a reader never sees half an entry. */
    private final ReadWriteLock lock = new ReentrantReadWriteLock();
    /** Stamps this group's entries while this replica leads: cluster time carried on across leaders. */
    private final ClusterClock clusterClock;
    /** The cluster time applied, for the stamps: read without the lock by {@link #startTransaction}. */
    private volatile long clusterTime;
    /** This replica's Ratis division, once asked (to tell the entries of the leader it follows). */
    private volatile DivisionInfo division;
    private final RocksKeyValueStore.Settings storeSettings;
    private final SnapshotSource snapshots;
    private final Watches watches = new Watches();
    /**
     * Reads that name a key held by a transaction across groups, waiting until it is settled here: the
     * transaction may have committed in its primary already, so the value held here may be its old one.
     */
    private final List<HeldRead> heldReads = new ArrayList<>();

    private record HeldRead(Query query, Message request, CompletableFuture<Message> answer) {
    }

    private final ExecutorService installer = Executors.newSingleThreadExecutor(DaemonThreads.named("ratchet-install"));
    /** Mends the server's configuration after a log truncation (see {@link #truncate}). */
    private final ExecutorService configurationMender =
            Executors.newSingleThreadExecutor(DaemonThreads.named("ratchet-configuration-mender"));
    private Path dir;
    private RocksKeyValueStore kv;
    private CompareExchangeStore store = new CompareExchangeStore();
    /** The position up to which the store is on disk: what Ratis takes as the latest snapshot. */
    private volatile DiskStateStorage.Durable durable;
    /** A flush asked for and not yet seen done: the write it must cover, and the position that write made. */
    private long flushFor = -1;
    private TermIndex flushPosition;
    /** When to ask for a flush: entries and log bytes applied since the last one asked for. */
    private final FlushPolicy flushPolicy;
    private long entriesSinceFlush;
    private long bytesSinceFlush;

    /**
     * When the store is flushed and the log purged: after {@code entries} entries or {@code bytes} of them
     * (as the log holds them), whichever comes first. The bytes bound keeps the log short when entries are
     * large (group commit packs many requests into one), and with it a restart's log load and replay.
     */
    public record FlushPolicy(long entries, long bytes) {
        public static final FlushPolicy DEFAULT = new FlushPolicy(10_000, 16L << 20);

        public FlushPolicy {
            if (entries < 1 || bytes < 1) {
                throw new IllegalArgumentException("a flush policy's bounds are positive");
            }
        }
    }
    private final KeyContention contention = new KeyContention(System.currentTimeMillis());
    private volatile ApplyListener applyListener = ApplyListener.NONE;
    private volatile Consumer<Throwable> mustStop = cause -> { };
    /** Why a command of a kind may not enter the log now; null when it may (see {@link #checkProposals}). */
    private volatile Function<Command.Kind, String> unproposable = kind -> null;
    private final QuotaAlarm quotaAlarm = new QuotaAlarm();
    /** The state's size and quota after the last entry: read without the lock by status and metrics. */
    private volatile Result.Quota quota = new Result.Quota(0, Limits.DEFAULT_QUOTA_BYTES);
    private volatile boolean quotaSet;
    /** The permission table after the last entry: read without the lock by every call's check. */
    private volatile AuthTable auth = AuthTable.EMPTY;

    /** A machine with the default store settings that cannot fetch snapshots (tests). */
    public RatchetStateMachine() {
        this(System::currentTimeMillis);
    }

    /** @param leaderClock the clock that stamps entries on the leader (never read during apply) */
    public RatchetStateMachine(LongSupplier leaderClock) {
        this(leaderClock, RocksKeyValueStore.Settings.DEFAULT, FlushPolicy.DEFAULT, SnapshotSource.NONE);
    }

    /**
     * @param leaderClock   the clock that stamps entries on the leader (never read during apply)
     * @param storeSettings the store's caches
     * @param flushPolicy   when the store is flushed and the log purged
     * @param snapshots     where a follower that fell behind the leader's log fetches the leader's state
     */
    public RatchetStateMachine(LongSupplier leaderClock, RocksKeyValueStore.Settings storeSettings,
                               FlushPolicy flushPolicy, SnapshotSource snapshots) {
        this.clusterClock = new ClusterClock(leaderClock, System::nanoTime);
        this.storeSettings = storeSettings;
        this.flushPolicy = flushPolicy;
        this.snapshots = snapshots;
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
            dir = storage.getSnapshotDir().toPath();
            Files.createDirectories(dir);
            recoverDirectories();
            if (!Files.isDirectory(dir.resolve(DB))) {
                convertHeapSnapshot(raftStorage);
            }
            openStore();
        }, IOException.class);
    }

    /**
     * Puts the directories right after a crash: a swap cut off half way is rolled back (the store being
     * replaced comes back; the leader sends its state again), and checkpoints not swapped in are dropped.
     */
    private void recoverDirectories() throws IOException {
        Path db = dir.resolve(DB);
        Path replaced = dir.resolve(REPLACED);
        if (!Files.isDirectory(db) && Files.isDirectory(replaced)) {
            LOG.warn("a checkpoint was being swapped in when the node stopped; going on with the store it replaced");
            Files.move(replaced, db, StandardCopyOption.ATOMIC_MOVE);
        }
        for (String leftover : List.of(REPLACED, INSTALL, INSTALLING, CONVERTING)) {
            Directories.delete(dir.resolve(leftover));
        }
        // Checkpoints that were being sent when the node stopped (a backup, a follower's fetch).
        Path tmp = storage.getTmpDir().toPath();
        if (Files.isDirectory(tmp)) {
            try (var entries = Files.list(tmp)) {
                for (Path p : entries.filter(p -> p.getFileName().toString().startsWith("checkpoint-")).toList()) {
                    Directories.delete(p);
                }
            }
        }
        Directories.sync(dir);
    }

    /**
     * A node of a release that kept its state in the heap left a snapshot file ({@link SnapshotFile}) and
     * no store: its state goes into a new store once, read and written in chunks, under the snapshot's
     * term and index, and the snapshot files are removed after. Until the new store is whole it has
     * another name, so a node stopped during the conversion converts again.
     */
    private void convertHeapSnapshot(RaftStorage raftStorage) throws IOException {
        SimpleStateMachineStorage old = new SimpleStateMachineStorage();
        old.init(raftStorage);
        SingleFileSnapshotInfo snapshot = old.loadLatestSnapshot();
        if (snapshot == null) {
            return;
        }
        File file = snapshot.getFile().getPath().toFile();
        if (snapshot.getFile().getFileDigest() != null) {
            MD5FileUtil.verifySavedMD5(file, snapshot.getFile().getFileDigest());
        }
        long started = System.nanoTime();
        Path converting = dir.resolve(CONVERTING);
        CompareExchangeStore converted;
        try (RocksKeyValueStore target = RocksKeyValueStore.open(converting, storeSettings)) {
            converted = SnapshotFile.read(file.toPath(), target, snapshot.getTerm(), snapshot.getIndex());
        } catch (RuntimeException e) {
            throw new IOException("cannot convert the snapshot " + file + " to the disk store: " + e.getMessage(), e);
        }
        Files.move(converting, dir.resolve(DB), StandardCopyOption.ATOMIC_MOVE);
        Directories.sync(dir);
        try (var files = Files.list(dir)) {
            for (Path p : files.filter(p -> p.getFileName().toString().startsWith("snapshot.")).toList()) {
                Files.delete(p);
            }
        }
        LOG.info("converted snapshot {} of the heap format into the disk store: {} items at index {}, in {} ms",
                file.getName(), converted.size(), snapshot.getIndex(), (System.nanoTime() - started) / 1_000_000);
    }

    /** Opens the store in {@code sm/db} and takes its state as this machine's. */
    private void openStore() {
        long started = System.nanoTime();
        RocksKeyValueStore opened = RocksKeyValueStore.open(dir.resolve(DB), storeSettings);
        CompareExchangeStore loaded;
        try {
            loaded = new CompareExchangeStore(opened);
        } catch (RuntimeException e) {
            opened.close();
            throw e;
        }
        List<Runnable> wakeups;
        lock.writeLock().lock();
        try {
            kv = opened;
            store = loaded;
            store.countContentionIn(contention);
            quota = new Result.Quota(store.used(), store.quota());
            quotaSet = store.quotaSet();
            auth = store.auth();
            clusterTime = store.clusterTime();
            TermIndex position = position(store);
            setLastAppliedTermIndex(position);
            durable = position.getIndex() > 0 ? new DiskStateStorage.Durable(position) : null;
            flushFor = -1;
            // The whole state may have changed (a checkpoint swapped in): every waiting watch is looked at.
            wakeups = withReleasedReads(watches.firedByAnyChange(store));
        } finally {
            lock.writeLock().unlock();
        }
        wakeups.forEach(Runnable::run);
        LOG.info("opened the store at index {} (term {}): {} items, {} bytes of quota used, in {} ms",
                store.lastEntryIndex(), store.lastEntryTerm(), loaded.size(), loaded.used(),
                (System.nanoTime() - started) / 1_000_000);
    }

    private static TermIndex position(CompareExchangeStore s) {
        return TermIndex.valueOf(s.lastEntryTerm(), s.lastEntryIndex());
    }

    /** The position up to which the store is on disk (null before the first entry): Ratis' latest snapshot. */
    @Override
    public SnapshotInfo getLatestSnapshot() {
        return durable;
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

    /** Called once a checkpoint fetched from the leader is ready: the store is replaced by it. */
    @Override
    public void reinitialize() throws IOException {
        Path install = dir.resolve(INSTALL);
        if (Files.isDirectory(install)) {
            Path db = dir.resolve(DB);
            Path replaced = dir.resolve(REPLACED);
            lock.writeLock().lock();
            try {
                kv.close();
                Files.move(db, replaced, StandardCopyOption.ATOMIC_MOVE);
                Files.move(install, db, StandardCopyOption.ATOMIC_MOVE);
                Directories.sync(dir);
                Directories.delete(replaced);
            } finally {
                lock.writeLock().unlock();
            }
            openStore();
        }
        if (getLifeCycleState() == LifeCycle.State.PAUSED) {
            getLifeCycle().transition(LifeCycle.State.STARTING);
            getLifeCycle().transition(LifeCycle.State.RUNNING);
        }
    }

    /**
     * The leader's log no longer holds what this follower needs: fetch a checkpoint of the leader's
     * store, verified whole, and answer with the position it holds. Ratis then pauses the machine and
     * calls {@link #reinitialize}, which swaps it in. On its own thread: a large state takes a while.
     * Ratis 3.3.0 swaps it in only when the leader notifies again, which it may never do while this
     * follower refuses its appends ({@link SnapshotInstallations}); so once the checkpoint is here the
     * installation is finished from this side too ({@link #finishInstall}).
     */
    @Override
    public CompletableFuture<TermIndex> notifyInstallSnapshotFromLeader(RoleInfoProto roleInfo, TermIndex firstInLog) {
        String leader = roleInfo.getFollowerInfo().getLeaderInfo().getId().getAddress();
        CompletableFuture<TermIndex> fetched = CompletableFuture.supplyAsync(() -> {
            try {
                return fetchCheckpoint(leader, firstInLog);
            } catch (IOException e) {
                throw new CompletionException(e);
            }
        }, installer);
        fetched.thenAccept(at -> finishInstallLater(firstInLog, at, 1));
        return fetched;
    }

    /** How often, and how many times, a fetched checkpoint's installation is asked to finish. */
    private static final long FINISH_PAUSE_MILLIS = 100;
    private static final int FINISH_ATTEMPTS = 50;

    private void finishInstallLater(TermIndex firstInLog, TermIndex fetched, int attempt) {
        try {
            CompletableFuture.delayedExecutor(FINISH_PAUSE_MILLIS, TimeUnit.MILLISECONDS, installer)
                    .execute(() -> finishInstall(firstInLog, fetched, attempt));
        } catch (RejectedExecutionException e) {
            // Closing.
        }
    }

    /**
     * Ends the installation of the checkpoint fetched for {@code firstInLog} as the leader's next
     * notification would, unless that notification came first (the log's snapshot is then the fetched
     * one); asks again while Ratis has not yet heard that the fetch is done, or while no leader is known,
     * up to {@link #FINISH_ATTEMPTS} times.
     */
    private void finishInstall(TermIndex firstInLog, TermIndex fetched, int attempt) {
        try {
            RaftServer.Division division = getServer().join().getDivision(getGroupId());
            if (division.getRaftLog().getSnapshotIndex() >= fetched.getIndex()) {
                return;
            }
            InstallSnapshotResult result = SnapshotInstallations.finish(division, firstInLog);
            if (result == InstallSnapshotResult.SNAPSHOT_INSTALLED) {
                LOG.info("finished the installation of the checkpoint for index {} without waiting for the leader's "
                        + "next notification (a Ratis 3.3.0 defect)", firstInLog.getIndex());
            } else if (result != InstallSnapshotResult.ALREADY_INSTALLED && attempt < FINISH_ATTEMPTS) {
                finishInstallLater(firstInLog, fetched, attempt + 1);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("could not finish the installation of the checkpoint for index {}; the leader's next notification "
                    + "will: {}", firstInLog.getIndex(), e.toString());
        }
    }

    private TermIndex fetchCheckpoint(String leader, TermIndex firstInLog) throws IOException {
        long started = System.nanoTime();
        Path installing = dir.resolve(INSTALLING);
        Directories.delete(installing);
        Directories.delete(dir.resolve(INSTALL));
        try {
            snapshots.fetch(leader, installing);
            TermIndex at = positionOf(installing);
            if (at.getIndex() + 1 < firstInLog.getIndex()) {
                throw new IOException("the checkpoint from " + leader + " holds index " + at.getIndex()
                        + ", below the leader's log, which starts at " + firstInLog.getIndex());
            }
            Files.move(installing, dir.resolve(INSTALL), StandardCopyOption.ATOMIC_MOVE);
            Directories.sync(dir);
            LOG.info("fetched a checkpoint at index {} (term {}) from {} in {} ms", at.getIndex(), at.getTerm(), leader,
                    (System.nanoTime() - started) / 1_000_000);
            return at;
        } catch (IOException | RuntimeException e) {
            LOG.warn("could not fetch a checkpoint from the leader at {}: {}", leader, e.toString());
            Directories.delete(installing);
            throw e instanceof IOException io ? io : new IOException(e);
        }
    }

    /** The position the store in {@code db} holds (a checkpoint), read without changing the directory. */
    public static TermIndex positionOf(Path db) throws IOException {
        try (RocksKeyValueStore checkpoint = RocksKeyValueStore.openReadOnly(db)) {
            StoreMeta meta = StoreMeta.read(checkpoint);
            if (meta == null) {
                throw new IOException(db + " holds no state");
            }
            return TermIndex.valueOf(meta.lastEntryTerm(), meta.lastEntryIndex());
        } catch (StorageException | IllegalStateException e) {
            throw new IOException(db + " cannot be read as a store: " + e.getMessage(), e);
        }
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
            checkProposable(batches);
            checkQuotasFitDisk(batches);
            Entry entry = new Entry(clusterClock.stamp(clusterTime), batches);
            return context.setLogData(RaftBytes.wrap(Codec.encodeEntry(entry))).build();
        } catch (InvalidCommandException e) {
            TransactionContext refused = context.build();
            refused.setException(e);
            return refused;
        }
    }

    /**
     * Has the leader ask {@code why} of every command it is asked to put into the log: a command it names a
     * reason for (one a member of an earlier release could not apply) is refused as invalid, with that reason,
     * and nothing is appended. The node's front end asks first and answers such a write itself; this keeps a
     * write sent over Ratis' own client protocol from passing by.
     */
    public void checkProposals(Function<Command.Kind, String> why) {
        this.unproposable = why;
    }

    private void checkProposable(List<Batch> batches) {
        Function<Command.Kind, String> why = unproposable;
        for (Batch batch : batches) {
            for (Request request : batch.requests()) {
                for (Command command : request.commands()) {
                    String refused = why.apply(command.kind());
                    if (refused != null) {
                        throw new InvalidCommandException("the cluster cannot take '" + command.kind().name().toLowerCase(
                                java.util.Locale.ROOT) + "' yet: " + refused);
                    }
                }
            }
        }
    }

    /** Tells {@code listener} of every entry applied from now on (the node's metrics); replaces the last one. */
    public void listenToApplies(ApplyListener listener) {
        this.applyListener = listener;
    }

    /**
     * Tells {@code listener} when this replica must stop: the Raft log could not be written or synced, the
     * store could not apply an entry, or an entry is in a later release's format
     * ({@link UnreadableEntryException}). Neither can be retried in place (after a failed fsync the kernel
     * may have dropped the pages it could not write, and an entry not applied here leaves this replica
     * behind its peers for good), so the node must stop serving; Ratis itself would leave the log refusing
     * every append, or stop applying, with the process still up. Called from Ratis' threads, perhaps more
     * than once.
     */
    public void onMustStop(Consumer<Throwable> listener) {
        this.mustStop = listener;
    }

    /** Ratis could not write or sync the log (an entry, or a whole segment when {@code failedEntry} is null). */
    @Override
    public void notifyLogFailed(Throwable cause, LogEntryProto failedEntry) {
        LOG.error("the Raft log failed{}: {}", failedEntry == null ? "" : " at entry " + failedEntry.getIndex(), cause.toString());
        mustStop.accept(cause);
    }

    /**
     * A quota larger than the disk that holds this leader's store is refused before it is appended: it
     * could never be reached, and the free-space floor would refuse writes long before it.
     */
    private void checkQuotasFitDisk(List<Batch> batches) {
        for (Batch batch : batches) {
            for (io.ratchet.protocol.Request request : batch.requests()) {
                for (Command command : request.commands()) {
                    if (command instanceof Command.SetQuota q && dir != null && q.bytes() > dir.toFile().getTotalSpace()) {
                        throw new InvalidCommandException("the leader refuses the quota: " + q.bytes() + " bytes is larger "
                                + "than the disk that holds its store (" + dir.toFile().getTotalSpace() + " bytes)");
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
        Result.Quota now = quota;
        if (!now.alarm() || now.used() + Footprint.mostGrowth(batch) <= now.quota()) {
            // Far from full, or more room left than the batch could take: nothing to refuse, and neither the
            // read lock nor a read of the state taken on the write path. (Stale by entries in flight at
            // most; what it lets through, apply judges.)
            return null;
        }
        lock.readLock().lock();
        try {
            return store.refusalsForQuota(batch);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Whether {@code writes} (a batch's {@link CompareExchangeStore#conditionalWrites}) can never land: there
     * is one at least, and each names an index below the latest write this node applied to its key
     * ({@link KeyContention#replacedBelow}, known for contended keys). Takes no lock: for the leader's front
     * end, on every such write.
     */
    public boolean replaced(List<Command.Op> writes) {
        for (Command.Op op : writes) {
            if (op.index() >= contention.replacedBelow(Keys.normalize(op.key()))) {
                return false;
            }
        }
        return !writes.isEmpty();
    }

    /** {@link CompareExchangeStore#refusalsBeforeLog}, against the state as applied now. */
    public List<Result> refusalsBeforeLog(Batch batch, List<Command.Op> writes, List<Result> found) {
        lock.readLock().lock();
        try {
            return store.refusalsBeforeLog(batch, writes, found);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Whether {@code batch} would add to the state now (see {@link CompareExchangeStore#grows}). */
    public boolean grows(Batch batch) {
        lock.readLock().lock();
        try {
            return store.grows(batch);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The state's size and its quota after the last entry applied (or snapshot loaded). */
    public Result.Quota quota() {
        return quota;
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
        // Read for the apply listener's latency and the cluster clock's estimate only; no state depends on it
        // (cluster time comes from stamps).
        long started = System.nanoTime();
        LogEntryProto logEntry = trx.getLogEntry();
        long index = logEntry.getIndex();
        entriesSinceFlush++;
        bytesSinceFlush += logEntry.getSerializedSize();
        if (index <= store.lastEntryIndex()) {
            // Applied before a restart and on disk already (Ratis applies from its last snapshot): the store
            // holds its effect, and nobody waits for its answer.
            updateLastAppliedTermIndex(logEntry.getTerm(), index);
            return CompletableFuture.completedFuture(RaftBytes.message(Codec.encodeResults(List.of())));
        }
        Entry entry = null;
        try {
            entry = Codec.decodeEntry(logEntry.getStateMachineLogEntry().getLogData().toByteArray());
        } catch (NewerFormatException e) {
            // A later release's leader wrote it, and the replicas of that release applied it: skipping it here
            // would leave this replica's state apart from theirs for good. Stop applying, as on a failed store.
            UnreadableEntryException unreadable = new UnreadableEntryException(index, e);
            LOG.error(unreadable.getMessage());
            mustStop.accept(unreadable);
            throw unreadable;
        } catch (InvalidCommandException e) {
            // Cannot come from our leader; a node must still not die on it. Every replica refuses alike.
            LOG.error("log entry {} cannot be decoded; it changes nothing: {}", index, e.getMessage());
        }
        List<Result> results;
        List<Runnable> wakeups;
        lock.writeLock().lock();
        try {
            try {
                results = entry == null
                        ? List.of(new Result.Rejected("log entry " + index + " cannot be decoded"))
                        : store.applyEntry(entry, index, logEntry.getTerm());
            } catch (StorageException e) {
                mustStop.accept(e);
                throw e;
            }
            updateLastAppliedTermIndex(logEntry.getTerm(), index);
            quota = new Result.Quota(store.used(), store.quota());
            quotaSet = store.quotaSet();
            auth = store.auth();
            clusterTime = store.clusterTime();
            quotaAlarm.observe(quota.used(), quota.quota(), results);
            // Only the watches this entry can have answered (the keys it changed), never all of them.
            wakeups = entry == null ? List.of() : watches.fired(store);
            wakeups = withReleasedReads(wakeups);
        } finally {
            lock.writeLock().unlock();
        }
        wakeups.forEach(Runnable::run);
        if (entry != null && fromLeaderFollowed(logEntry.getTerm())) {
            clusterClock.saw(entry.stamp(), started);
        }
        if (entry != null) {
            tellApplied(entry, results, System.nanoTime() - started);
        }
        return CompletableFuture.completedFuture(RaftBytes.message(Codec.encodeResults(results)));
    }

    /**
     * Whether an entry of {@code term} was appended by the leader this replica follows now: not a replay from
     * its log, not an earlier leader's entry caught up with, not its own (a leader knows its stamps). Only such
     * an entry's stamp tells where cluster time is now.
     */
    private boolean fromLeaderFollowed(long term) {
        DivisionInfo info = division;
        if (info == null) {
            RaftServer server = getServer().getNow(null);
            if (server == null) {
                return false;
            }
            try {
                info = server.getDivision(getGroupId()).getInfo();
            } catch (IOException e) {
                return false;
            }
            division = info;
        }
        return !info.isLeader() && info.getLeaderId() != null && info.getCurrentTerm() == term;
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
            if (store.held(query)) {
                HeldRead held = new HeldRead(query, request, new CompletableFuture<>());
                synchronized (heldReads) {
                    heldReads.add(held);
                }
                return held.answer();
            }
            results = switch (query.kind()) {
                // One answer per get, all from the same applied state: as if each were served alone then. A get of
                // a held key is answered locked at once, not waited for: the batch is many callers' (see Result.Locked).
                case GETS -> CompletableFuture.completedFuture(((Query.Gets) query).gets().stream().map(get -> {
                    Result.Locked locked = store.lockOn(get.key());
                    return locked != null ? locked : read(get);
                }).toList());
                case WATCH -> watch((Query.Watch) query).thenApply(List::of);
                case CONTENTION -> CompletableFuture.completedFuture(List.of(contention.answer(((Query.Contention) query).limit())));
                case TXN_STATUS -> CompletableFuture.completedFuture(store.txnStates(((Query.TxnStatus) query).txns()));
                case GET, GET_ALL, LIST_ITEMS, STATS, GET_DOCUMENT, AUTH_STATUS ->
                        CompletableFuture.completedFuture(List.of(read(query)));
                case SHAPE -> CompletableFuture.failedFuture(new StateMachineException(RaftGroupMemberId.valueOf(getId(),
                        getGroupId()), new InvalidCommandException("the cluster's shape is the front end's to answer")));
            };
        } finally {
            lock.readLock().unlock();
        }
        return results.thenApply(r -> RaftBytes.message(Codec.encodeResults(r)));
    }

    /**
     * Under the write lock, after an entry or a new state: {@code wakeups} and, for every held read whose
     * keys are free now, its answer, asked again once the lock is let go.
     */
    private List<Runnable> withReleasedReads(List<Runnable> wakeups) {
        List<HeldRead> released = new ArrayList<>();
        synchronized (heldReads) {
            if (heldReads.isEmpty()) {
                return wakeups;
            }
            for (var it = heldReads.iterator(); it.hasNext(); ) {
                HeldRead h = it.next();
                if (!store.held(h.query())) {
                    it.remove();
                    released.add(h);
                }
            }
        }
        if (released.isEmpty()) {
            return wakeups;
        }
        List<Runnable> all = new ArrayList<>(wakeups);
        for (HeldRead h : released) {
            all.add(() -> query(h.request()).whenComplete((answer, error) -> {
                if (error != null) {
                    h.answer().completeExceptionally(error);
                } else {
                    h.answer().complete(answer);
                }
            }));
        }
        return all;
    }

    /**
     * What this group's leader should do now for transactions across groups (see
     * {@link CompareExchangeStore#transactionWork}), at {@code time} of its clock.
     */
    public List<TxnWork> transactionWork(long time, long settleAfterMillis, long forgetAfterMillis) {
        lock.readLock().lock();
        try {
            return store.transactionWork(time, settleAfterMillis, forgetAfterMillis);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The keys transaction {@code txn} holds in this group now (what settling it here would write). */
    public List<String> heldKeys(String txn) {
        lock.readLock().lock();
        try {
            return store.heldKeys(txn);
        } finally {
            lock.readLock().unlock();
        }
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
     * The stamp this replica would give an entry now, were it the leader: where its expiry scans look.
     */
    public long stampNow() {
        return clusterClock.peek(clusterTime);
    }

    /**
     * Items that have expired at {@code time} by the leader's clock ({@link #stampNow}), for the sweeper to
     * propose; apply re-checks each against cluster time.
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

    /**
     * Configuration and metadata entries change nothing in the store; they move the applied position
     * only forward (replayed from the log after a restart, they may lie below what the store holds).
     */
    @Override
    public void notifyTermIndexUpdated(long term, long index) {
        TermIndex applied = getLastAppliedTermIndex();
        if (applied == null || index > applied.getIndex()) {
            updateLastAppliedTermIndex(term, index);
        }
    }

    /**
     * Called while the log truncates entries a new leader's conflict (under the log's lock, before the
     * leader's entries are appended). Ratis 3.3.0 drops here, with the truncated ones, the configurations
     * the leader's entries had just set ({@link LogConfigurations}): once the
     * append is done, they are put back from the log, so the server runs on the latest configuration its
     * log holds, as Raft requires. The mender waits for the append by reading the log, whose lock the
     * append holds; it runs before the follower could time out and stand for election (milliseconds
     * against the election timeout).
     */
    @Override
    public CompletableFuture<Void> truncate(long index) {
        try {
            configurationMender.execute(() -> mendConfiguration(index));
        } catch (RejectedExecutionException e) {
            // Closing: the configuration is read from the log again at the next start.
        }
        return CompletableFuture.completedFuture(null);
    }

    private void mendConfiguration(long index) {
        try {
            RaftServer.Division division = getServer().join().getDivision(getGroupId());
            // From the first index truncated (what Ratis 3.3.0 passes): every configuration the append set lies there or after.
            List<Long> restored = LogConfigurations.restore(division, index);
            if (!restored.isEmpty()) {
                LOG.warn("the log truncation from index {} dropped the configurations at {} although the log holds "
                        + "them (a Ratis 3.3.0 defect); put back, now {}", index, restored, division.getRaftConf());
            }
        } catch (IOException | RuntimeException e) {
            LOG.error("could not check the configuration after the log truncation from index {}", index, e);
        }
    }

    @Override
    public void close() throws IOException {
        watches.close();
        synchronized (heldReads) {
            heldReads.forEach(h -> h.answer().completeExceptionally(new ServerNotReadyException("the node is stopping")));
            heldReads.clear();
        }
        installer.shutdownNow();
        configurationMender.shutdownNow();
        lock.writeLock().lock();
        try {
            if (kv != null) {
                kv.close(); // flushes: a clean stop leaves nothing for the log to apply again
                kv = null;
            }
        } finally {
            lock.writeLock().unlock();
        }
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
     * Makes a checkpoint of the store in {@code target} (which must not exist) and returns the position
     * it holds: every entry up to it and none after. Apply goes on meanwhile: a checkpoint holds the state
     * as of one of the store's writes, and each write is one whole entry, which names itself inside.
     */
    public TermIndex checkpoint(Path target) throws IOException {
        RocksKeyValueStore current;
        lock.readLock().lock();
        try {
            current = kv;
            if (current == null) {
                throw new IOException("the store is closed");
            }
            // Under the read lock only so that the store is not closed or swapped while the checkpoint is made.
            current.checkpoint(target);
        } catch (StorageException e) {
            throw new IOException(e.getMessage(), e);
        } finally {
            lock.readLock().unlock();
        }
        return positionOf(target);
    }

    /** The store's disk and memory use, and its directory's free space; null before it opens. */
    public StoreUsage storeUsage() {
        RocksKeyValueStore current = kv;
        if (current == null) {
            return null;
        }
        try {
            return new StoreUsage(current.usage(), current.directory().toFile().getUsableSpace(), current.backgroundError());
        } catch (StorageException e) {
            return null; // closed meanwhile (a stop, a checkpoint swapped in)
        }
    }

    /**
     * What the store uses.
     *
     * @param freeBytes       what the file system holding the store has left for it
     * @param backgroundError a flush or compaction that failed (the store then takes no writes), or null
     */
    public record StoreUsage(RocksKeyValueStore.Usage store, long freeBytes, String backgroundError) {
    }

    /**
     * Lets Raft purge its log up to what the store has on disk. Ratis asks every so many entries (fewer
     * than the policy's); once the policy's entries or bytes have been applied since the last flush asked
     * for, this asks RocksDB to flush, without waiting, and answers the position of that flush once it has
     * completed; meanwhile, and when nothing new is on disk, -1 (Ratis then asks again after its next
     * entries; each ask costs a few reads). So apply never waits for a flush, and the log is never purged
     * past an entry the store could lose in a crash. Runs on the thread that applies entries, so the
     * store's position cannot move meanwhile.
     */
    @Override
    public long takeSnapshot() {
        RocksKeyValueStore current = kv;
        TermIndex position = position(store);
        if (current == null || position.getIndex() <= 0) {
            return -1;
        }
        if (flushFor >= 0) {
            if (current.flushedSequence() < flushFor) {
                return -1;
            }
            flushFor = -1;
            return published(flushPosition);
        }
        if (current.flushedSequence() >= current.lastSequence()) {
            return published(position); // everything is on disk already
        }
        if (entriesSinceFlush < flushPolicy.entries() && bytesSinceFlush < flushPolicy.bytes()) {
            return -1;
        }
        entriesSinceFlush = 0;
        bytesSinceFlush = 0;
        flushFor = current.lastSequence();
        flushPosition = position;
        current.requestFlush();
        return -1;
    }

    /** Makes {@code position} the latest snapshot; its index when that moved it forward, else -1 (nothing new). */
    private long published(TermIndex position) {
        DiskStateStorage.Durable previous = durable;
        if (previous != null && position.compareTo(previous.getTermIndex()) <= 0) {
            return -1;
        }
        durable = new DiskStateStorage.Durable(position);
        return position.getIndex();
    }
}
