package io.ratchet.statemachine;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Item;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The items, in key order, each held as one byte array: its normalized key, its indexes and expiry,
 * and its spelling, metadata and value as UTF-8. A store of millions of small items pays per object
 * far more than per byte, so an item is two objects here (the array and its map entry) instead of an
 * {@link Item} record with its strings and their arrays; an {@link Item} is made only when one is
 * asked for. Also keeps the items that expire in expiry order, and their {@link Footprint}.
 *
 * <p>Keys are ordered by the unsigned bytes of their normalized UTF-8 form, which is code point
 * order. Not thread-safe.
 */
final class ItemTable {
    // A record: u16 key length, the normalized key, a flags byte, the index, then what the flags say
    // (created index, expiry, u16-prefixed spelling, s32-prefixed metadata), then the value to the end.
    private static final int KEY_AT = 2;
    private static final int CREATED = 1;
    private static final int EXPIRES = 2;
    private static final int SPELLED = 4;
    private static final int METADATA = 8;
    private static final int MAX_SHORT = 0xffff;
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    /** Each record maps to itself: the map orders them by their key bytes. */
    private final TreeMap<byte[], byte[]> records = new TreeMap<>(ItemTable::compareKeys);
    private final NavigableSet<Due> expiring = new TreeSet<>();
    private long footprint;

    /** An item's expiry and its record: ordered by expiry, then key. */
    private record Due(long at, byte[] record) implements Comparable<Due> {
        @Override
        public int compareTo(Due o) {
            int c = Long.compare(at, o.at);
            return c != 0 ? c : compareKeys(record, o.record);
        }
    }

    /** The item under normalized key {@code id}, or null. */
    Item get(String id) {
        byte[] record = records.get(probe(id));
        return record == null ? null : decode(record);
    }

    /** The index of the item under normalized key {@code id}, or -1 when there is none. */
    long indexOf(String id) {
        byte[] record = records.get(probe(id));
        return record == null ? -1 : index(record);
    }

    /** Stores {@code item} under {@code id}, its normalized key, replacing what was there. */
    void put(String id, Item item) {
        byte[] record = encode(id, item);
        byte[] previous = records.put(record, record);
        if (previous != null) {
            // The map kept the old array as the entry's key: put the new one in its place.
            records.remove(record);
            records.put(record, record);
            forget(previous);
        }
        footprint += footprint(record);
        long expiresAt = expiresAt(record);
        if (expiresAt != 0) {
            expiring.add(new Due(expiresAt, record));
        }
    }

    /** Removes the item under {@code id}; whether there was one. */
    boolean remove(String id) {
        byte[] previous = records.remove(probe(id));
        if (previous == null) {
            return false;
        }
        forget(previous);
        return true;
    }

    private void forget(byte[] record) {
        footprint -= footprint(record);
        long expiresAt = expiresAt(record);
        if (expiresAt != 0) {
            expiring.remove(new Due(expiresAt, record));
        }
    }

    /** Items whose normalized key starts with {@code prefix}, in key order, after skipping {@code start}. */
    List<Item> list(String prefix, int start, int pageSize) {
        byte[] from = probe(prefix);
        int prefixLength = keyLength(from);
        List<Item> page = new ArrayList<>(Math.min(pageSize, 64));
        int skipped = 0;
        for (byte[] record : records.tailMap(from, true).keySet()) {
            boolean matches = keyLength(record) >= prefixLength
                    && Arrays.equals(record, KEY_AT, KEY_AT + prefixLength, from, KEY_AT, KEY_AT + prefixLength);
            if (!matches || page.size() == pageSize) {
                break;
            }
            if (skipped < start) {
                skipped++;
            } else {
                page.add(decode(record));
            }
        }
        return page;
    }

    /** Up to {@code limit} items that have expired at {@code time}, soonest first. */
    List<Command.KeyIndex> expiredAt(long time, int limit) {
        List<Command.KeyIndex> due = new ArrayList<>();
        for (Due d : expiring) {
            if (d.at() > time || due.size() == limit) {
                break;
            }
            due.add(new Command.KeyIndex(spelling(d.record()), index(d.record())));
        }
        return due;
    }

    /** Every item in key order, each made as the iteration reaches it. */
    Iterable<Item> all() {
        return () -> new Iterator<>() {
            private final Iterator<byte[]> it = records.keySet().iterator();

            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public Item next() {
                return decode(it.next());
            }
        };
    }

    int size() {
        return records.size();
    }

    /** The items' {@link Footprint}, summed. */
    long footprint() {
        return footprint;
    }

    // ---- the record layout

    private static byte[] probe(String id) {
        byte[] key = id.getBytes(StandardCharsets.UTF_8);
        byte[] probe = new byte[KEY_AT + key.length];
        putShort(probe, 0, key.length);
        System.arraycopy(key, 0, probe, KEY_AT, key.length);
        return probe;
    }

    private static byte[] encode(String id, Item item) {
        byte[] key = id.getBytes(StandardCharsets.UTF_8);
        byte[] spelling = id.equals(item.key()) ? null : item.key().getBytes(StandardCharsets.UTF_8);
        byte[] metadata = item.metadata() == null ? null : item.metadata().getBytes(StandardCharsets.UTF_8);
        byte[] value = item.value().getBytes(StandardCharsets.UTF_8);
        if (key.length > MAX_SHORT || (spelling != null && spelling.length > MAX_SHORT)) {
            throw new IllegalStateException("key '" + item.key() + "' is longer than any valid key");
        }
        boolean created = item.createdIndex() != item.index();
        int flags = (created ? CREATED : 0) | (item.expiresAt() != 0 ? EXPIRES : 0)
                | (spelling != null ? SPELLED : 0) | (metadata != null ? METADATA : 0);
        int size = KEY_AT + key.length + 1 + Long.BYTES + (created ? Long.BYTES : 0)
                + (item.expiresAt() != 0 ? Long.BYTES : 0) + (spelling != null ? 2 + spelling.length : 0)
                + (metadata != null ? 4 + metadata.length : 0) + value.length;
        byte[] r = new byte[size];
        putShort(r, 0, key.length);
        System.arraycopy(key, 0, r, KEY_AT, key.length);
        int at = KEY_AT + key.length;
        r[at++] = (byte) flags;
        at = putLong(r, at, item.index());
        if (created) {
            at = putLong(r, at, item.createdIndex());
        }
        if (item.expiresAt() != 0) {
            at = putLong(r, at, item.expiresAt());
        }
        if (spelling != null) {
            putShort(r, at, spelling.length);
            System.arraycopy(spelling, 0, r, at + 2, spelling.length);
            at += 2 + spelling.length;
        }
        if (metadata != null) {
            putInt(r, at, metadata.length);
            System.arraycopy(metadata, 0, r, at + 4, metadata.length);
            at += 4 + metadata.length;
        }
        System.arraycopy(value, 0, r, at, value.length);
        return r;
    }

    /** The parts of a record, located. */
    private static final class Layout {
        final int flags;
        final long index;
        final long createdIndex;
        final long expiresAt;
        final int spellingAt;
        final int spellingLength;
        final int metadataAt;
        final int metadataLength;
        final int valueAt;

        Layout(byte[] r) {
            int at = KEY_AT + keyLength(r);
            flags = r[at++];
            index = getLong(r, at);
            at += Long.BYTES;
            createdIndex = (flags & CREATED) != 0 ? getLong(r, at) : index;
            at += (flags & CREATED) != 0 ? Long.BYTES : 0;
            expiresAt = (flags & EXPIRES) != 0 ? getLong(r, at) : 0;
            at += (flags & EXPIRES) != 0 ? Long.BYTES : 0;
            spellingLength = (flags & SPELLED) != 0 ? getShort(r, at) : 0;
            spellingAt = at + 2;
            at += (flags & SPELLED) != 0 ? 2 + spellingLength : 0;
            metadataLength = (flags & METADATA) != 0 ? getInt(r, at) : 0;
            metadataAt = at + 4;
            at += (flags & METADATA) != 0 ? 4 + metadataLength : 0;
            valueAt = at;
        }
    }

    private static Item decode(byte[] r) {
        Layout l = new Layout(r);
        String metadata = (l.flags & METADATA) != 0
                ? new String(r, l.metadataAt, l.metadataLength, StandardCharsets.UTF_8) : null;
        return new Item(spelling(r, l), new String(r, l.valueAt, r.length - l.valueAt, StandardCharsets.UTF_8),
                l.index, l.createdIndex, l.expiresAt, metadata);
    }

    private static String spelling(byte[] r) {
        return spelling(r, new Layout(r));
    }

    private static String spelling(byte[] r, Layout l) {
        return (l.flags & SPELLED) != 0
                ? new String(r, l.spellingAt, l.spellingLength, StandardCharsets.UTF_8)
                : new String(r, KEY_AT, keyLength(r), StandardCharsets.UTF_8);
    }

    private static long index(byte[] r) {
        return getLong(r, KEY_AT + keyLength(r) + 1);
    }

    private static long expiresAt(byte[] r) {
        int at = KEY_AT + keyLength(r);
        int flags = r[at];
        if ((flags & EXPIRES) == 0) {
            return 0;
        }
        return getLong(r, at + 1 + Long.BYTES + ((flags & CREATED) != 0 ? Long.BYTES : 0));
    }

    private static long footprint(byte[] r) {
        Layout l = new Layout(r);
        return Footprint.item(keyLength(r), l.spellingLength, r.length - l.valueAt, l.metadataLength,
                l.expiresAt != 0);
    }

    private static int keyLength(byte[] r) {
        return getShort(r, 0);
    }

    static int compareKeys(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, KEY_AT, KEY_AT + keyLength(a), b, KEY_AT, KEY_AT + keyLength(b));
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

    private static void putShort(byte[] r, int at, int v) {
        r[at] = (byte) (v >>> 8);
        r[at + 1] = (byte) v;
    }

    private static int getShort(byte[] r, int at) {
        return ((r[at] & 0xff) << 8) | (r[at + 1] & 0xff);
    }

    private static void putInt(byte[] r, int at, int v) {
        INT.set(r, at, v);
    }

    private static int getInt(byte[] r, int at) {
        return (int) INT.get(r, at);
    }

    private static int putLong(byte[] r, int at, long v) {
        LONG.set(r, at, v);
        return at + Long.BYTES;
    }

    private static long getLong(byte[] r, int at) {
        return (long) LONG.get(r, at);
    }
}
