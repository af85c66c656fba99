package io.ratchet.statemachine;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Result;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The compare-exchange semantics, and nothing else: commands in, results out. No I/O, no Raft, no
 * clock, no randomness. Every replica that applies the same entries at the same indexes holds the same
 * state and returns the same results.
 *
 * <p>An item's index is the log index of the entry that last wrote it. Log indexes only grow, so an
 * item that is deleted and created again never gets an old index back: a condition on a stale index
 * always fails (no ABA).
 *
 * <p>Not thread-safe: the caller applies and reads under its own lock.
 */
public final class CompareExchangeStore {
    /** Items by normalized (lower-case) key, so iteration is in key order. */
    private final NavigableMap<String, Item> items = new TreeMap<>();
    private long clusterTime;
    private long lastEntryIndex;

    /**
     * Applies one log entry: advances cluster time to the entry's stamp (never backwards) and applies
     * its commands in order, all at {@code logIndex}.
     *
     * @throws IllegalStateException when {@code logIndex} does not exceed the last entry's: replaying an
     *                               index would break the no-ABA guarantee, so it is a bug, not input
     */
    public List<Result> applyEntry(Entry entry, long logIndex) {
        if (logIndex <= lastEntryIndex) {
            throw new IllegalStateException("log index " + logIndex + " applied after " + lastEntryIndex);
        }
        lastEntryIndex = logIndex;
        clusterTime = Math.max(clusterTime, entry.stamp());
        List<Result> results = new ArrayList<>(entry.commands().size());
        for (Command command : entry.commands()) {
            results.add(apply(command, logIndex, clusterTime));
        }
        return results;
    }

    /**
     * Applies one command at {@code logIndex}. A failed condition writes nothing and returns the item's
     * current state; an invalid command writes nothing and returns {@link Result.Rejected}.
     */
    public Result apply(Command command, long logIndex, long clusterTime) {
        try {
            command.validate();
        } catch (InvalidCommandException e) {
            return new Result.Rejected(e.getMessage());
        }
        String id = Keys.normalize(command.key());
        Item current = items.get(id);
        long currentIndex = current == null ? 0 : current.index();
        // A delete's index is never 0 (validated), so it never matches an absent item.
        long expected = command instanceof Command.Put p ? p.index() : ((Command.Delete) command).index();
        if (expected != currentIndex) {
            return current == null
                    ? new Result.Write(false, command.key(), 0, null, null)
                    : new Result.Write(false, current.key(), current.index(), current.value(), current.metadata());
        }
        if (command instanceof Command.Put p) {
            // An existing item keeps the key as first written; a new one takes this spelling.
            String key = current == null ? p.key() : current.key();
            items.put(id, new Item(key, p.value(), logIndex, p.metadata()));
            return new Result.Write(true, key, logIndex, p.value(), p.metadata());
        }
        items.remove(id);
        return new Result.Write(true, current.key(), 0, null, null);
    }

    /** The item under {@code key} (compared case-insensitively), or null. */
    public Item get(String key) {
        return items.get(Keys.normalize(key));
    }

    /** The items under {@code keys} that exist, in key order, each once. */
    public List<Item> getAll(Collection<String> keys) {
        TreeMap<String, Item> found = new TreeMap<>();
        for (String key : keys) {
            String id = Keys.normalize(key);
            Item item = items.get(id);
            if (item != null) {
                found.put(id, item);
            }
        }
        return List.copyOf(found.values());
    }

    /** Items whose key starts with {@code prefix} (case-insensitively), in key order, after skipping {@code start}. */
    public List<Item> list(String prefix, int start, int pageSize) {
        String from = Keys.normalize(prefix);
        List<Item> page = new ArrayList<>(Math.min(pageSize, 64));
        int skipped = 0;
        for (Map.Entry<String, Item> e : items.tailMap(from, true).entrySet()) {
            if (!e.getKey().startsWith(from) || page.size() == pageSize) {
                break;
            }
            if (skipped < start) {
                skipped++;
            } else {
                page.add(e.getValue());
            }
        }
        return page;
    }

    public int size() {
        return items.size();
    }

    /** Cluster time in epoch milliseconds: the greatest leader stamp applied so far. */
    public long clusterTime() {
        return clusterTime;
    }

    /** The log index of the last entry applied (0 before any). */
    public long lastEntryIndex() {
        return lastEntryIndex;
    }

    /** Every item in key order, read-only: what a snapshot writes. */
    public Collection<Item> items() {
        return Collections.unmodifiableCollection(items.values());
    }

    /** Rebuilds a store from a snapshot's contents. */
    public static CompareExchangeStore restore(long clusterTime, long lastEntryIndex, Iterable<Item> items) {
        CompareExchangeStore store = new CompareExchangeStore();
        store.clusterTime = clusterTime;
        store.lastEntryIndex = lastEntryIndex;
        for (Item item : items) {
            if (item.index() > lastEntryIndex) {
                throw new IllegalStateException("item '" + item.key() + "' has index " + item.index()
                        + " beyond the snapshot's " + lastEntryIndex);
            }
            store.items.put(Keys.normalize(item.key()), item);
        }
        return store;
    }
}
