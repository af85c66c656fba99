package io.ratchet.statemachine;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Expiry;
import io.ratchet.protocol.Item;
import io.ratchet.statemachine.kv.Cursor;
import io.ratchet.statemachine.kv.Overlay;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * The items, in key order, each one record ({@link ItemRecord}) under its normalized key, and the items
 * that expire in expiry order beside them. Keeps their count and {@link Footprint}, which the store
 * persists with its position. Keys are ordered by the unsigned bytes of their normalized UTF-8 form,
 * which is code point order. Not thread-safe: written by apply, read under the store's lock.
 */
final class Items {
    private static final byte[] EXPIRY_START = StateKeys.single(StateKeys.EXPIRY);
    private static final byte[] EXPIRY_END = StateKeys.after(EXPIRY_START);

    private final Overlay state;
    private final LowWater expiryFloor = new LowWater(EXPIRY_START);
    private long count;
    private long footprint;
    /**
     * Recent records by key, so that a hot key's condition, the write after it and its reads do not each
     * ask the store: a direct-mapped cache of {@link #CACHE_SLOTS} slots, small records only, so it is
     * bounded whatever the state's size. A slot holds one immutable pair (a key and its record, or null
     * for "none"), so readers setting slots at once leave pairs that belong together; and every pair set
     * is the committed record or one this writer staged (readers run under the store's read lock, apply
     * under its write lock, and only apply writes).
     */
    private final Looked[] cache = new Looked[CACHE_SLOTS];
    static final int CACHE_SLOTS = 1 << 15;
    static final int CACHE_RECORD_BYTES = 512;

    private record Looked(byte[] key, byte[] record) {
    }

    Items(Overlay state, long count, long footprint) {
        this.state = state;
        this.count = count;
        this.footprint = footprint;
    }

    /** The item under normalized key {@code id}, or null. */
    Item get(String id) {
        byte[] record = record(StateKeys.named(StateKeys.ITEM, id));
        return record == null ? null : ItemRecord.decode(id, record);
    }

    /** The index of the item under normalized key {@code id}, or -1 when there is none. */
    long indexOf(String id) {
        byte[] record = record(StateKeys.named(StateKeys.ITEM, id));
        return record == null ? -1 : ItemRecord.index(record);
    }

    /** The record under {@code key} now (null: none), from the cache when it holds the key. */
    private byte[] record(byte[] key) {
        Looked l = cache[slot(key)];
        if (l != null && Arrays.equals(key, l.key())) {
            return l.record();
        }
        byte[] record = state.get(key);
        remember(key, record);
        return record;
    }

    private static int slot(byte[] key) {
        return Arrays.hashCode(key) & (CACHE_SLOTS - 1);
    }

    /** Caches {@code record} (null: none) as the one under {@code key}; a large one only empties the slot. */
    private void remember(byte[] key, byte[] record) {
        cache[slot(key)] = record == null || record.length <= CACHE_RECORD_BYTES ? new Looked(key, record) : null;
    }

    /** Stores {@code item} under {@code id}, its normalized key, replacing what was there. */
    void put(String id, Item item) {
        byte[] key = StateKeys.named(StateKeys.ITEM, id);
        byte[] previous = record(key);
        if (previous != null) {
            forget(id, key, previous);
        } else {
            count++;
        }
        byte[] record = ItemRecord.encode(id, item);
        state.put(key, record);
        remember(key, record);
        footprint += ItemRecord.footprint(key.length - 1, record);
        if (item.expiresAt() != 0) {
            byte[] due = StateKeys.numbered(StateKeys.EXPIRY, item.expiresAt(), id);
            state.put(due, dueValue(item.index(), item.key()));
            expiryFloor.inserted(due);
        }
    }

    /** Removes the item under {@code id}; whether there was one. */
    boolean remove(String id) {
        byte[] key = StateKeys.named(StateKeys.ITEM, id);
        byte[] previous = record(key);
        if (previous == null) {
            return false;
        }
        forget(id, key, previous);
        count--;
        state.delete(key);
        remember(key, null);
        return true;
    }

    private void forget(String id, byte[] key, byte[] record) {
        footprint -= ItemRecord.footprint(key.length - 1, record);
        long expiresAt = ItemRecord.expiresAt(record);
        if (expiresAt != 0) {
            state.delete(StateKeys.numbered(StateKeys.EXPIRY, expiresAt, id));
        }
    }

    /** Items whose normalized key starts with {@code prefix}, in key order, after skipping {@code start}. */
    List<Item> list(String prefix, int start, int pageSize) {
        byte[] from = StateKeys.named(StateKeys.ITEM, prefix);
        List<Item> page = new ArrayList<>(Math.min(pageSize, 64));
        int skipped = 0;
        try (Cursor c = state.scan(from, StateKeys.after(from))) {
            while (page.size() < pageSize && c.next()) {
                if (skipped < start) {
                    skipped++;
                } else {
                    page.add(ItemRecord.decode(StateKeys.name(c.key()), c.value()));
                }
            }
        }
        return page;
    }

    /** Up to {@code limit} items that have expired at {@code time}, soonest first. */
    List<Command.KeyIndex> expiredAt(long time, int limit) {
        List<Command.KeyIndex> due = new ArrayList<>();
        byte[] from = expiryFloor.from();
        try (Cursor c = state.scan(from, EXPIRY_END)) {
            boolean first = true;
            while (due.size() < limit && c.next()) {
                if (first) {
                    expiryFloor.firstEntryAt(c.key());
                    first = false;
                }
                if (!Expiry.expired(StateKeys.number(c.key()), time)) {
                    break;
                }
                byte[] v = c.value();
                due.add(new Command.KeyIndex(new String(v, Long.BYTES, v.length - Long.BYTES, StandardCharsets.UTF_8),
                        ByteArrays.getLong(v, 0)));
            }
            if (first) {
                expiryFloor.firstEntryAt(EXPIRY_END);
            }
        }
        return due;
    }

    private static byte[] dueValue(long index, String spelling) {
        byte[] s = spelling.getBytes(StandardCharsets.UTF_8);
        byte[] v = new byte[Long.BYTES + s.length];
        ByteArrays.putLong(v, 0, index);
        System.arraycopy(s, 0, v, Long.BYTES, s.length);
        return v;
    }

    /** Every item in key order, each made as the iteration reaches it; the caller closes it. */
    CloseableIterator<Item> all() {
        Cursor c = state.scan(StateKeys.single(StateKeys.ITEM), StateKeys.after(StateKeys.single(StateKeys.ITEM)));
        return new CloseableIterator<>() {
            private Boolean has;

            @Override
            public boolean hasNext() {
                if (has == null) {
                    has = c.next();
                }
                return has;
            }

            @Override
            public Item next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                has = null;
                return ItemRecord.decode(StateKeys.name(c.key()), c.value());
            }

            @Override
            public void close() {
                c.close();
            }
        };
    }

    long size() {
        return count;
    }

    /** The items' {@link Footprint}, summed. */
    long footprint() {
        return footprint;
    }

    /** Normalized keys in the table's order: code point order, which is their UTF-8 bytes' order. */
    static int compareIds(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    /** An iterator over the store that holds a cursor open until closed. */
    interface CloseableIterator<T> extends Iterator<T>, AutoCloseable {
        @Override
        void close();
    }
}
