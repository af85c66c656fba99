package io.ratchet.statemachine.kv;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.rocksdb.AbstractEventListener;
import org.rocksdb.AbstractNativeReference;
import org.rocksdb.BackgroundErrorReason;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Checkpoint;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushJobInfo;
import org.rocksdb.FlushOptions;
import org.rocksdb.IndexType;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Status;
import org.rocksdb.TablePropertiesCollectorFactory;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * A {@link KeyValueStore} in RocksDB: one database in a directory, one column family, written without
 * RocksDB's own write-ahead log. A node's Raft log is its write-ahead log: every write here is the
 * application of a log entry, and the caller writes the entry's index in the same {@link Changes}. So
 * after a crash the database holds the state as of some entry (whatever its last flush held: a write is
 * atomic, and a flush takes whole writes), its index says which, and the node applies the log from
 * there. What is durable is therefore what has been flushed: {@link #flushedSequence} tells how far that
 * is, and the state machine lets Raft purge its log only up to there.
 *
 * <p>Reads may run beside the writer. Errors of the disk surface as {@link StorageException}.
 */
public final class RocksKeyValueStore implements KeyValueStore {
    static {
        NativeLibrary.load();
    }

    /**
     * How much native memory the database may use for its caches.
     *
     * @param blockCacheBytes  the block cache (data, index and filter blocks read from its files)
     * @param writeBufferBytes one memtable; at most two are held, the second while the first is flushed
     */
    /** The memtable's Bloom filter's size, as a share of the memtable's (RocksDB's own guidance: 0.1 at most). */
    private static final double MEMTABLE_FILTER_RATIO = 0.02;

    public record Settings(long blockCacheBytes, long writeBufferBytes) {
        public static final Settings DEFAULT = new Settings(128L << 20, 64L << 20);

        public Settings {
            if (blockCacheBytes < (1 << 20) || writeBufferBytes < (1 << 20)) {
                throw new IllegalArgumentException("the block cache and write buffer are at least 1 MiB each");
            }
        }

        /** Each of {@code stores} stores' share of these (at least 1 MiB of each): a node's groups share its memory. */
        public Settings dividedAmong(int stores) {
            return stores == 1 ? this : new Settings(Math.max(1 << 20, blockCacheBytes / stores),
                    Math.max(1 << 20, writeBufferBytes / stores));
        }
    }

    /** What the database holds and uses, for metrics and status. */
    public record Usage(long liveFileBytes, long totalFileBytes, long memtableBytes, long blockCacheBytes,
                        long pendingCompactionBytes, long estimatedKeys, int runningCompactions) {
    }

    private final Path dir;
    private final RocksDB db;
    private final List<AbstractNativeReference> resources;
    private final LRUCache cache;
    private final WriteOptions writeOptions;
    private final AtomicLong flushedSequence = new AtomicLong();
    private final AtomicReference<String> backgroundError = new AtomicReference<>();
    private boolean readOnly;
    /**
     * Every call into the database holds this shared, and closing holds it alone: a native call on a
     * closed database would crash the process, so after {@link #close} every call fails with a
     * {@link StorageException} instead, and cursors still open are closed first.
     */
    private final ReentrantReadWriteLock open = new ReentrantReadWriteLock();
    private volatile boolean closed;
    private final Set<AutoCloseable> cursors = ConcurrentHashMap.newKeySet();

    private RocksKeyValueStore(Path dir, RocksDB db, List<AbstractNativeReference> resources, LRUCache cache, WriteOptions writeOptions) {
        this.dir = dir;
        this.db = db;
        this.resources = resources;
        this.cache = cache;
        this.writeOptions = writeOptions;
    }

    /** Opens the database in {@code dir}, making it when there is none. */
    public static RocksKeyValueStore open(Path dir, Settings settings) {
        return open(dir, settings, false);
    }

    /**
     * Opens the database in {@code dir} to read, changing nothing in the directory (a checkpoint being
     * sent, say); {@link #write} then fails.
     */
    public static RocksKeyValueStore openReadOnly(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new StorageException("there is no store in " + dir);
        }
        return open(dir, new Settings(1 << 20, 1 << 20), true);
    }

    private static RocksKeyValueStore open(Path dir, Settings settings, boolean readOnly) {
        List<AbstractNativeReference> resources = new ArrayList<>();
        try {
            Files.createDirectories(dir);
            LRUCache cache = add(resources, new LRUCache(settings.blockCacheBytes()));
            Options options = add(resources, new Options());
            BloomFilter bloom = add(resources, new BloomFilter(10));
            // Index and filter blocks live in the block cache, so the cache bounds the native memory at any
            // number of items; partitioned, so a lookup loads only the partitions it needs.
            BlockBasedTableConfig table = new BlockBasedTableConfig()
                    .setBlockCache(cache)
                    .setFilterPolicy(bloom)
                    .setCacheIndexAndFilterBlocks(true)
                    .setCacheIndexAndFilterBlocksWithHighPriority(true)
                    .setPinL0FilterAndIndexBlocksInCache(true)
                    .setPinTopLevelIndexAndFilter(true)
                    .setIndexType(IndexType.kTwoLevelIndexSearch)
                    .setPartitionFilters(true);
            Holder holder = new Holder();
            AbstractEventListener listener = add(resources, new AbstractEventListener() {
                @Override
                public void onFlushCompleted(RocksDB ignored, FlushJobInfo info) {
                    holder.flushed(info.getLargestSeqno());
                }

                @Override
                public void onBackgroundError(BackgroundErrorReason reason, Status status) {
                    holder.failed(reason + ": " + status.getCodeString() + " " + status.getState());
                }
            });
            options.setCreateIfMissing(!readOnly)
                    .setTableFormatConfig(table)
                    .setWriteBufferSize(settings.writeBufferBytes())
                    // A Bloom filter over the memtable's whole keys: most reads of the apply path are of keys
                    // that are absent (a reservation's create-only put), and a miss then skips the memtable's
                    // skip-list search; the files' own filters answer for them below.
                    .setMemtableWholeKeyFiltering(true)
                    .setMemtablePrefixBloomSizeRatio(MEMTABLE_FILTER_RATIO)
                    .setMaxWriteBufferNumber(2)
                    .setCompressionType(CompressionType.LZ4_COMPRESSION)
                    .setBottommostCompressionType(CompressionType.ZSTD_COMPRESSION)
                    .setLevelCompactionDynamicLevelBytes(true)
                    .setMaxBackgroundJobs(2)
                    .setBytesPerSync(1 << 20)
                    // Flushed on close; a crash loses only what the Raft log holds again.
                    .setAvoidFlushDuringShutdown(false)
                    .setInfoLogLevel(InfoLogLevel.WARN_LEVEL)
                    .setKeepLogFileNum(4)
                    .setMaxLogFileSize(8 << 20)
                    .setListeners(List.of(listener));
            // Expired items, lapsed idempotency keys and old tombstones are deleted from the front of their
            // indexes, which every scan of them starts at: files full of deletions are compacted early, so a
            // scan does not step over deleted keys for long.
            options.setTablePropertiesCollectorFactory(List.of(add(resources,
                    TablePropertiesCollectorFactory.NewCompactOnDeletionCollectorFactory(16_384, 4_096, 0.3))));
            WriteOptions writeOptions = add(resources, new WriteOptions().setDisableWAL(true));
            RocksDB db = readOnly ? RocksDB.openReadOnly(options, dir.toString()) : RocksDB.open(options, dir.toString());
            RocksKeyValueStore store = new RocksKeyValueStore(dir, db, resources, cache, writeOptions);
            holder.store = store;
            store.readOnly = readOnly;
            // Everything in the database when it opens is on disk.
            store.flushedSequence.set(db.getLatestSequenceNumber());
            return store;
        } catch (RocksDBException | java.io.IOException e) {
            resources.forEach(AbstractNativeReference::close);
            if (readOnly) {
                throw new StorageException("cannot read the store in " + dir + ": " + e.getMessage(), e);
            }
            throw new StorageException("cannot open the store in " + dir + ": " + e.getMessage(), e);
        }
    }

    /** Lets the listener, made before the store, reach it. */
    private static final class Holder {
        volatile RocksKeyValueStore store;

        void flushed(long sequence) {
            RocksKeyValueStore s = store;
            if (s != null) {
                s.flushedSequence.accumulateAndGet(sequence, Math::max);
            }
        }

        void failed(String error) {
            RocksKeyValueStore s = store;
            if (s != null) {
                s.backgroundError.compareAndSet(null, error);
            }
        }
    }

    private static <T extends AbstractNativeReference> T add(List<AbstractNativeReference> resources, T resource) {
        resources.add(0, resource); // closed in the reverse order of making
        return resource;
    }

    @Override
    public byte[] get(byte[] key) {
        enter();
        try {
            return db.get(key);
        } catch (RocksDBException e) {
            throw new StorageException("cannot read the store in " + dir + ": " + e.getMessage(), e);
        } finally {
            leave();
        }
    }

    /** Holds the database open for one call; fails once it is closed. */
    private void enter() {
        open.readLock().lock();
        if (closed) {
            open.readLock().unlock();
            throw new StorageException("the store in " + dir + " is closed");
        }
    }

    private void leave() {
        open.readLock().unlock();
    }

    @Override
    public Cursor scan(byte[] from, byte[] to) {
        enter();
        try {
            Slice upper = to == null ? null : new Slice(to);
            ReadOptions options = new ReadOptions();
            if (upper != null) {
                options.setIterateUpperBound(upper);
            }
            RocksIterator it = db.newIterator(options);
            it.seek(from);
            RocksCursor cursor = new RocksCursor(it, options, upper);
            cursors.add(cursor);
            return cursor;
        } finally {
            leave();
        }
    }

    /** A scan's iterator, closed by its user or, at the latest, when the store closes. */
    private final class RocksCursor implements Cursor {
        private final RocksIterator it;
        private final ReadOptions options;
        private final Slice upper;
        private boolean started;
        private boolean done;
        private byte[] key;
        private byte[] value;

        RocksCursor(RocksIterator it, ReadOptions options, Slice upper) {
            this.it = it;
            this.options = options;
            this.upper = upper;
        }

        @Override
        public boolean next() {
            enter();
            try {
                return advance();
            } finally {
                leave();
            }
        }

        private boolean advance() {
            if (done) {
                throw new StorageException("the cursor is closed");
            }
            if (started) {
                it.next();
            }
            started = true;
            if (!it.isValid()) {
                try {
                    it.status();
                } catch (RocksDBException e) {
                    throw new StorageException("cannot read the store in " + dir + ": " + e.getMessage(), e);
                }
                key = null;
                value = null;
                return false;
            }
            key = it.key();
            value = it.value();
            return true;
        }

        @Override
        public byte[] key() {
            return key;
        }

        @Override
        public byte[] value() {
            return value;
        }

        @Override
        public synchronized void close() {
            if (done) {
                return;
            }
            done = true;
            cursors.remove(this);
            it.close();
            options.close();
            if (upper != null) {
                upper.close();
            }
        }
    }

    @Override
    public void write(Changes changes) {
        enter();
        // Built here in RocksDB's serialized write batch layout and handed over in one call: a JNI call per
        // key was a good part of what a write cost (docs/PERFORMANCE.md).
        try (WriteBatch batch = new WriteBatch(serialized(changes))) {
            db.write(writeOptions, batch);
        } catch (RocksDBException e) {
            throw new StorageException("cannot write the store in " + dir + ": " + e.getMessage()
                    + (backgroundError.get() == null ? "" : " (after a background error: " + backgroundError.get() + ")"), e);
        } finally {
            leave();
        }
    }

    /** A put's record type in a serialized write batch (RocksDB's {@code kTypeValue}); a delete's is 0. */
    private static final byte PUT = 1;
    private static final byte DELETE = 0;
    private static final int BATCH_HEADER = 12;

    /**
     * {@code changes} as RocksDB's serialized write batch: an 8-byte sequence number (0: the database
     * gives it), a 4-byte count, both little-endian, then each record: its type, the key and (for a put)
     * the value, each as a varint32 length and its bytes.
     */
    static byte[] serialized(Changes changes) {
        int size = BATCH_HEADER;
        int count = 0;
        for (Map.Entry<byte[], byte[]> change : changes.entries()) {
            byte[] key = change.getKey();
            byte[] value = change.getValue();
            size += 1 + varintSize(key.length) + key.length;
            if (value != Changes.DELETED) {
                size += varintSize(value.length) + value.length;
            }
            count++;
        }
        byte[] b = new byte[size];
        b[8] = (byte) count;
        b[9] = (byte) (count >>> 8);
        b[10] = (byte) (count >>> 16);
        b[11] = (byte) (count >>> 24);
        int at = BATCH_HEADER;
        for (Map.Entry<byte[], byte[]> change : changes.entries()) {
            byte[] value = change.getValue();
            b[at++] = value == Changes.DELETED ? DELETE : PUT;
            at = putBytes(b, at, change.getKey());
            if (value != Changes.DELETED) {
                at = putBytes(b, at, value);
            }
        }
        return b;
    }

    private static int varintSize(int v) {
        int n = 1;
        while ((v >>>= 7) != 0) {
            n++;
        }
        return n;
    }

    private static int putBytes(byte[] b, int at, byte[] bytes) {
        int v = bytes.length;
        while ((v & ~0x7f) != 0) {
            b[at++] = (byte) ((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        b[at++] = (byte) v;
        System.arraycopy(bytes, 0, b, at, bytes.length);
        return at + bytes.length;
    }

    /** The sequence number of the last write (each key of a write takes one). */
    public long lastSequence() {
        enter();
        try {
            return db.getLatestSequenceNumber();
        } finally {
            leave();
        }
    }

    /** Every write up to this sequence number is on disk. */
    public long flushedSequence() {
        return flushedSequence.get();
    }

    /** Starts writing the memtables to disk, without waiting: {@link #flushedSequence} moves once done. */
    public void requestFlush() {
        enter();
        try (FlushOptions options = new FlushOptions().setWaitForFlush(false)) {
            db.flush(options);
        } catch (RocksDBException e) {
            throw new StorageException("cannot flush the store in " + dir + ": " + e.getMessage(), e);
        } finally {
            leave();
        }
    }

    /** Writes the memtables to disk and waits until they are. */
    public void flush() {
        enter();
        try (FlushOptions options = new FlushOptions().setWaitForFlush(true)) {
            db.flush(options);
            flushedSequence.accumulateAndGet(db.getLatestSequenceNumber(), Math::max);
        } catch (RocksDBException e) {
            throw new StorageException("cannot flush the store in " + dir + ": " + e.getMessage(), e);
        } finally {
            leave();
        }
    }

    /**
     * Makes a checkpoint of the database in {@code target} (which must not exist): hard links to its
     * immutable files and a copy of its manifest, after a flush. It holds the state as of one write,
     * whichever was the last before the flush; read its position from the data itself. Writes go on
     * meanwhile.
     */
    public void checkpoint(Path target) {
        enter();
        try (Checkpoint checkpoint = Checkpoint.create(db)) {
            checkpoint.createCheckpoint(target.toString());
        } catch (RocksDBException e) {
            throw new StorageException("cannot make a checkpoint of " + dir + " in " + target + ": " + e.getMessage(), e);
        } finally {
            leave();
        }
    }

    /** What a background job (a flush or compaction) failed with, or null: the store stops taking writes then. */
    public String backgroundError() {
        return backgroundError.get();
    }

    public Usage usage() {
        enter();
        try {
            return usageNow();
        } finally {
            leave();
        }
    }

    private Usage usageNow() {
        return new Usage(property("rocksdb.live-sst-files-size"), property("rocksdb.total-sst-files-size"),
                property("rocksdb.cur-size-all-mem-tables"), cache.getUsage(),
                property("rocksdb.estimate-pending-compaction-bytes"), property("rocksdb.estimate-num-keys"),
                (int) property("rocksdb.num-running-compactions"));
    }

    private long property(String name) {
        try {
            return db.getLongProperty(name);
        } catch (RocksDBException e) {
            return -1;
        }
    }

    public Path directory() {
        return dir;
    }

    /** Flushes what is in memory (a clean stop leaves nothing to apply again) and releases the database; once. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            if (!readOnly) {
                flush();
            }
        } catch (StorageException e) {
            // Nothing is lost: what was not flushed, the Raft log holds.
        }
        open.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            for (AutoCloseable cursor : List.copyOf(cursors)) {
                try {
                    cursor.close();
                } catch (Exception e) {
                    // Closing an iterator cannot fail in a way that matters here.
                }
            }
            db.close();
            resources.forEach(AbstractNativeReference::close);
        } finally {
            open.writeLock().unlock();
        }
    }
}
