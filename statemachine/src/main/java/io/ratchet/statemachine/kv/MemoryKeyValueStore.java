package io.ratchet.statemachine.kv;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A {@link KeyValueStore} in the heap, for unit tests and in-process test clusters: the same rules as
 * the store on disk, nothing kept across a restart. A scan copies the entries of its range when it is
 * made, so it sees one state, as a scan of the disk store does.
 */
public final class MemoryKeyValueStore implements KeyValueStore {
    private final TreeMap<byte[], byte[]> entries = new TreeMap<>(Arrays::compareUnsigned);
    private final ReadWriteLock lock = new ReentrantReadWriteLock();

    @Override
    public byte[] get(byte[] key) {
        lock.readLock().lock();
        try {
            byte[] v = entries.get(key);
            return v == null ? null : v.clone();
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public Cursor scan(byte[] from, byte[] to) {
        List<byte[][]> copy = new ArrayList<>();
        lock.readLock().lock();
        try {
            NavigableMap<byte[], byte[]> range = to == null ? entries.tailMap(from, true) : entries.subMap(from, true, to, false);
            for (Map.Entry<byte[], byte[]> e : range.entrySet()) {
                copy.add(new byte[][] {e.getKey(), e.getValue()});
            }
        } finally {
            lock.readLock().unlock();
        }
        return new Cursor() {
            private int at = -1;

            @Override
            public boolean next() {
                return ++at < copy.size();
            }

            @Override
            public byte[] key() {
                return copy.get(at)[0].clone();
            }

            @Override
            public byte[] value() {
                return copy.get(at)[1].clone();
            }

            @Override
            public void close() {
            }
        };
    }

    @Override
    public void write(Changes changes) {
        lock.writeLock().lock();
        try {
            for (Map.Entry<byte[], byte[]> change : changes.entries()) {
                if (change.getValue() == Changes.DELETED) {
                    entries.remove(change.getKey());
                } else {
                    entries.put(change.getKey().clone(), change.getValue().clone());
                }
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** How many keys it holds. */
    public int size() {
        lock.readLock().lock();
        try {
            return entries.size();
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public void close() {
    }
}
