package io.ratchet.statemachine.kv;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;

/**
 * A store's state with changes staged above it: reads see the staged changes first, and
 * {@link #commit} writes them all at once. How one log entry is applied: every command of the entry
 * reads what the commands before it wrote, and the entry reaches the store whole or not at all.
 * Not thread-safe; readers that are not the writer read the store itself, which holds no staged change.
 */
public final class Overlay {
    private final KeyValueStore store;
    private final Changes staged = new Changes();

    public Overlay(KeyValueStore store) {
        this.store = store;
    }

    public KeyValueStore store() {
        return store;
    }

    public byte[] get(byte[] key) {
        byte[] v = staged.lookup(key);
        if (v == Changes.DELETED) {
            return null;
        }
        return v != null ? v : store.get(key);
    }

    public void put(byte[] key, byte[] value) {
        staged.put(key, value);
    }

    public void delete(byte[] key) {
        staged.delete(key);
    }

    /** The entries from {@code from} to {@code to} (exclusive; null: to the end) as they would be after a commit. */
    public Cursor scan(byte[] from, byte[] to) {
        if (staged.isEmpty()) {
            return store.scan(from, to);
        }
        return new Merged(store.scan(from, to), staged.range(from, to).entrySet().iterator());
    }

    /** Writes what is staged, at once, and starts afresh. */
    public void commit() {
        if (!staged.isEmpty()) {
            store.write(staged);
            staged.clear();
        }
    }

    /** Whether anything is staged. */
    public boolean dirty() {
        return !staged.isEmpty();
    }

    /** The bytes staged so far (see {@link Changes#bytes}). */
    public long stagedBytes() {
        return staged.bytes();
    }

    /** The store's entries merged with the staged changes, which win; deleted keys left out. */
    private static final class Merged implements Cursor {
        private final Cursor base;
        private final Iterator<Map.Entry<byte[], byte[]>> changes;
        private boolean baseValid;
        private Map.Entry<byte[], byte[]> change;
        private byte[] key;
        private byte[] value;

        Merged(Cursor base, Iterator<Map.Entry<byte[], byte[]>> changes) {
            this.base = base;
            this.changes = changes;
            baseValid = base.next();
            change = changes.hasNext() ? changes.next() : null;
        }

        @Override
        public boolean next() {
            while (baseValid || change != null) {
                int c = !baseValid ? 1 : change == null ? -1 : Arrays.compareUnsigned(base.key(), change.getKey());
                if (c < 0) {
                    key = base.key();
                    value = base.value();
                    baseValid = base.next();
                    return true;
                }
                if (c == 0) {
                    baseValid = base.next(); // the staged change shadows the stored entry
                }
                Map.Entry<byte[], byte[]> e = change;
                change = changes.hasNext() ? changes.next() : null;
                if (e.getValue() != Changes.DELETED) {
                    key = e.getKey();
                    value = e.getValue();
                    return true;
                }
            }
            return false;
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
        public void close() {
            base.close();
        }
    }
}
