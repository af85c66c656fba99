package io.ratchet.node.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.RaftBytes;
import io.ratchet.protocol.Result;
import io.ratchet.statemachine.RatchetStateMachine;
import io.ratchet.statemachine.RatchetStateMachine.StoreUsage;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.function.ToDoubleFunction;
import org.apache.ratis.statemachine.SnapshotInfo;

/**
 * This node's applied state as gauges, read at each scrape: items, open client sessions, watches
 * waiting, locks held, the position its store is on disk at, and the store's files, memory and free space.
 *
 * <p>Locks held are the live items under {@link Locks#PREFIX}: a range of the store's sorted keys, so a
 * scrape costs in proportion to the locks, never to all items (each page under the read lock that
 * queries take, between which entries apply).
 */
final class StoreMetrics implements MeterBinder {
    private final RatchetStateMachine stateMachine;
    private final IntSupplier pendingWatches;

    /** @param pendingWatches watches this node's front end holds until a change or their timeout */
    StoreMetrics(RatchetStateMachine stateMachine, IntSupplier pendingWatches) {
        this.stateMachine = stateMachine;
        this.pendingWatches = pendingWatches;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder("ratchet.items", () -> stats().itemCount())
                .description("items in this node's applied state").register(registry);
        Gauge.builder("ratchet.sessions.open", stateMachine::sessionCount)
                .description("open client sessions in this node's applied state").register(registry);
        Gauge.builder("ratchet.watches.pending", pendingWatches::getAsInt)
                .description("watches waiting on this node for a change").register(registry);
        Gauge.builder("ratchet.locks.held", this::locksHeld)
                .description("locks (items under " + Locks.PREFIX + ") whose lease has not run out at cluster time")
                .register(registry);
        Gauge.builder("ratchet.storage.used", () -> stateMachine.quota().used()).baseUnit(BaseUnits.BYTES)
                .description("what the applied state counts for against the storage quota (the same on every node)")
                .register(registry);
        Gauge.builder("ratchet.storage.quota", () -> stateMachine.quota().quota()).baseUnit(BaseUnits.BYTES)
                .description("the storage quota in the applied state").register(registry);
        Gauge.builder("ratchet.storage.alarm", () -> stateMachine.quota().alarm() ? 1 : 0)
                .description("1 when the state uses " + Limits.QUOTA_ALARM_PERCENT + "% of its quota or more")
                .register(registry);
        Gauge.builder("ratchet.snapshot.index", this::snapshotIndex)
                .description("the log index up to which this node's store is on disk, and the log purged (0: none yet)")
                .register(registry);
        store(registry, "ratchet.store.files", "the store's live files on disk (what it holds after compaction)",
                u -> u.store().liveFileBytes());
        store(registry, "ratchet.store.files.total", "every file of the store, obsolete ones not yet deleted included",
                u -> u.store().totalFileBytes());
        store(registry, "ratchet.store.memtables", "the store's memtables: written, not yet flushed to files",
                u -> u.store().memtableBytes());
        store(registry, "ratchet.store.block.cache", "the store's block cache in use (native memory)",
                u -> u.store().blockCacheBytes());
        store(registry, "ratchet.store.compaction.pending", "bytes compaction estimates it has yet to rewrite",
                u -> u.store().pendingCompactionBytes());
        store(registry, "ratchet.store.disk.free", "free space left on the file system that holds the store",
                StoreUsage::freeBytes);
        Gauge.builder("ratchet.store.failed", () -> {
                    StoreUsage u = stateMachine.storeUsage();
                    return u != null && u.backgroundError() != null ? 1 : 0;
                }).description("1 when a flush or compaction failed: the store then takes no writes, and the node stops")
                .register(registry);
    }

    private void store(MeterRegistry registry, String name, String description, ToDoubleFunction<StoreUsage> value) {
        Gauge.builder(name, () -> {
            StoreUsage u = stateMachine.storeUsage();
            return u == null ? Double.NaN : value.applyAsDouble(u);
        }).baseUnit(BaseUnits.BYTES).description(description).register(registry);
    }

    private Result.Stats stats() {
        return (Result.Stats) ask(new Query.Stats()).get(0);
    }

    private long locksHeld() {
        long now = stats().clusterTime();
        long held = 0;
        for (int start = 0; ; start += Limits.MAX_PAGE_SIZE) {
            List<Item> page = ((Result.Items) ask(new Query.ListItems(Locks.PREFIX, start, Limits.MAX_PAGE_SIZE)).get(0)).items();
            held += page.stream().filter(i -> !i.expiredAt(now)).count();
            if (page.size() < Limits.MAX_PAGE_SIZE) {
                return held;
            }
        }
    }

    /** A query of this node's applied state: answered at once, under the state machine's read lock. */
    private List<Result> ask(Query query) {
        byte[] reply = stateMachine.query(RaftBytes.message(Codec.encodeQuery(query))).join().getContent().toByteArray();
        return Codec.decodeResults(reply);
    }

    private long snapshotIndex() {
        SnapshotInfo snapshot = stateMachine.getLatestSnapshot();
        return snapshot == null ? 0 : snapshot.getIndex();
    }
}
