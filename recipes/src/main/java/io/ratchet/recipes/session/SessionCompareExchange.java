package io.ratchet.recipes.session;

import io.ratchet.client.InvalidRequestException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Expiry;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Keys;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The compare-exchange items of one {@link ClusterSession}: reads are tracked with their index, and
 * create, update and delete are recorded and sent with the session's documents in its one
 * transaction. An update or delete is conditioned on the index this session's {@link #get} saw; a
 * create on the key being absent.
 *
 * <p>{@link #get} reads the cluster the first time the session names a key; later it returns the
 * session's view: that read plus its own unsaved changes (an unsaved put shows its new value at the
 * index it is conditioned on; the new index is known after the save). Use it from the session's thread.
 */
public final class SessionCompareExchange {
    private final ClusterSession session;
    private final ClusterAccess cluster;
    /** An item as the session knows it from the cluster; {@code item} null when absent. */
    private record Known(String key, Item item) {
        long index() {
            return item == null ? 0 : item.index();
        }
    }

    /** By normalized key: the item as read or last saved. */
    private final Map<String, Known> known = new LinkedHashMap<>();
    /** By normalized key, in the order recorded: a Put or Delete already conditioned. */
    private final Map<String, Command.Op> changes = new LinkedHashMap<>();

    SessionCompareExchange(ClusterSession session, ClusterAccess cluster) {
        this.session = session;
        this.cluster = cluster;
    }

    /** The item under {@code key} in the session's view, or empty when absent. */
    public Optional<Item> get(String key) {
        session.ensureUsable();
        String normalized = normalize(key);
        Command.Op change = changes.get(normalized);
        if (change instanceof Command.Put put) {
            Known before = known.get(normalized);
            Item was = before == null ? null : before.item();
            return Optional.of(new Item(was == null ? put.key() : was.key(), put.value(), put.index(),
                    was == null ? 0 : was.createdIndex(), Expiry.fromMetadata(put.metadata()), put.metadata()));
        }
        if (change instanceof Command.Delete) {
            return Optional.empty();
        }
        return Optional.ofNullable(read(key, normalized).item());
    }

    /** Records a create-only put: the save fails if {@code key} exists by then. */
    public void create(String key, Object value) {
        create(key, value, null);
    }

    /** As {@link #create(String, Object)}, with metadata (a JSON object, or null). */
    public void create(String key, Object value, Object metadata) {
        record(new Command.Put(key, json("value", value), 0, metadata == null ? null : json("metadata", metadata)));
    }

    /**
     * Records a new value for an item this session read with {@link #get}, at the index that read saw;
     * the item's metadata is kept.
     *
     * @throws IllegalStateException when the session has not read {@code key}, or read it as absent
     */
    public void update(String key, Object value) {
        Item item = present(key, "update");
        record(new Command.Put(key, json("value", value), item.index(), item.metadata()));
    }

    /** As {@link #update(String, Object)}, replacing the metadata (a JSON object, or null for none). */
    public void update(String key, Object value, Object metadata) {
        Item item = present(key, "update");
        record(new Command.Put(key, json("value", value), item.index(), metadata == null ? null : json("metadata", metadata)));
    }

    /**
     * Records the deletion of an item this session read, at the index that read saw. Deleting an item
     * the session knows is absent does nothing; deleting one it created but never read cancels the create.
     *
     * @throws IllegalStateException when the session has neither read nor created {@code key}
     */
    public void delete(String key) {
        session.ensureUsable();
        String normalized = normalize(key);
        Known k = known.get(normalized);
        if (k != null && k.item() != null) {
            record(new Command.Delete(key, k.index()));
        } else if (k != null || changes.get(normalized) instanceof Command.Put) {
            changes.remove(normalized);
        } else {
            throw new IllegalStateException("read '" + key + "' with get() before deleting it: the delete is conditioned"
                    + " on the index that the read sees");
        }
    }

    // ---- for the session

    boolean hasChanges() {
        return !changes.isEmpty();
    }

    Collection<Command.Op> changes() {
        return changes.values();
    }

    /** Check-only ops for every item read but not changed, at the index it was read at (0: absent). */
    List<Command.Op> readChecks() {
        List<Command.Op> checks = new ArrayList<>();
        known.forEach((normalized, k) -> {
            if (!changes.containsKey(normalized)) {
                checks.add(new Command.Check(k.key(), k.index()));
            }
        });
        return checks;
    }

    /** After a successful save: every changed item is known at {@code index} (or absent). */
    void saved(java.util.function.ToLongFunction<String> indexOf) {
        changes.forEach((normalized, op) -> {
            long index = indexOf.applyAsLong(op.key());
            Known before = known.get(normalized);
            Item was = before == null || op.index() == 0 ? null : before.item();
            if (op instanceof Command.Put put) {
                // An update keeps the item's first spelling and creation index; a create starts both.
                Item item = new Item(was == null ? put.key() : was.key(), put.value(), index,
                        was == null ? index : was.createdIndex(), Expiry.fromMetadata(put.metadata()), put.metadata());
                known.put(normalized, new Known(item.key(), item));
            } else {
                known.put(normalized, new Known(op.key(), null));
            }
        });
        changes.clear();
    }

    // ---- helpers

    private void record(Command.Op op) {
        session.ensureUsable();
        ClusterSession.validate(op);
        changes.put(Keys.normalize(op.key()), op);
    }

    private Item present(String key, String what) {
        session.ensureUsable();
        Known k = known.get(normalize(key));
        if (k == null) {
            throw new IllegalStateException("read '" + key + "' with get() before you " + what + " it: the " + what
                    + " is conditioned on the index that the read sees");
        }
        if (k.item() == null) {
            throw new IllegalStateException("'" + key + "' was absent when this session read it; create it instead");
        }
        return k.item();
    }

    private Known read(String key, String normalized) {
        Known k = known.get(normalized);
        if (k == null) {
            k = new Known(key, cluster.item(key).orElse(null));
            known.put(normalized, k);
        }
        return k;
    }

    private static String normalize(String key) {
        try {
            return Keys.normalize(Keys.validate(key));
        } catch (InvalidCommandException e) {
            throw new InvalidRequestException(e.getMessage(), e);
        }
    }

    private static String json(String what, Object value) {
        if (value == null) {
            throw new InvalidRequestException(what + " must not be null", null);
        }
        return Json.write(value);
    }
}
