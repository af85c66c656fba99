package io.ratchet.statemachine;

import io.ratchet.protocol.AuthTable;
import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Expiry;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The compare-exchange semantics, and nothing else: commands in, results out. No I/O, no Raft, no
 * clock, no randomness. Every replica that applies the same entries at the same indexes holds the same
 * state and returns the same results.
 *
 * <p>An item's index is the log index of the entry that last wrote it. Log indexes only grow, so an
 * item that is deleted and created again never gets an old index back: a condition on a stale index
 * always fails (no ABA).
 *
 * <p>Time is cluster time: the greatest leader stamp of any entry applied so far. Expiry, leases and
 * the retention of idempotency keys are judged on it alone.
 *
 * <p>Not thread-safe: the caller applies and reads under its own lock.
 */
public final class CompareExchangeStore {
    /** Deleted keys remembered for watches; beyond this the oldest are dropped (see {@link #lastChange}). */
    static final int MAX_TOMBSTONES = 65_536;

    /** Items by normalized (lower-case) key, in key order, with their expiry order. */
    private final ItemTable items = new ItemTable();
    private final NavigableMap<String, Document> documents = new TreeMap<>();
    /** Normalized key to the index that deleted it, oldest first. */
    private final LinkedHashMap<String, Long> tombstones = new LinkedHashMap<>();
    /** Every deletion not in {@code tombstones} happened at or before this index. */
    private long tombstoneWatermark;
    private final Map<String, Remembered> remembered = new HashMap<>();
    private final RequestFingerprint fingerprints = new RequestFingerprint();
    private final NavigableSet<Expiring> rememberedUntil = new TreeSet<>();
    private final ClientSessions sessions = new ClientSessions();
    /** The documents' and the remembered results' {@link Footprint}s, summed (the items' own their table). */
    private long documentBytes;
    private long rememberedBytes;
    /** The most the state may count (see {@link Footprint}); writes that would pass it are refused. */
    private long quota = Limits.DEFAULT_QUOTA_BYTES;
    /** Whether a {@link Command.SetQuota} ever applied (else {@link #quota} is the default). */
    private boolean quotaSet;
    /**
     * Who may do what. Not counted against the quota: a few users and grants, and refusing a change to
     * them would refuse the administrator the means to manage a full cluster.
     */
    private AuthTable auth = AuthTable.EMPTY;
    private long clusterTime;
    private long lastEntryIndex;
    /** Told of every condition evaluated; not state (see {@link KeyContention}). */
    private KeyContention contention;
    /**
     * What the last entry changed, for watches (see {@link #changedKeys}): not state, never read by apply.
     * Reused from entry to entry, so recording a write allocates nothing.
     */
    private ArrayList<String> changed = new ArrayList<>();
    private List<String> changedView = Collections.unmodifiableList(changed);
    /** The tombstone watermark before the last entry (see {@link #watermarkBefore}). */
    private long watermarkBefore;

    /** Something that lapses at a cluster time; ordered by that time, then by id. */
    record Expiring(long at, String id) implements Comparable<Expiring> {
        @Override
        public int compareTo(Expiring o) {
            int c = Long.compare(at, o.at);
            return c != 0 ? c : id.compareTo(o.id);
        }
    }

    /**
     * The results of an idempotent request, kept until cluster time passes {@code until}, with a
     * fingerprint of the request's commands so a key reused for a different request is refused.
     * {@code canonical} says which fingerprint: {@link RequestFingerprint}'s, or (read from a snapshot of
     * format 3 or older) the hash of the request's wire encoding, which was used before.
     */
    record Remembered(long until, long fingerprint, boolean canonical, List<Result> results) {
    }

    /**
     * Applies one log entry: advances cluster time to the entry's stamp (never backwards), expires what
     * has lapsed, then applies each batch's requests' commands in order, all at {@code logIndex}. A
     * batch in a client session applies at most once (see {@link ClientSessions}). Returns every
     * command's result in order.
     *
     * @throws IllegalStateException when {@code logIndex} does not exceed the last entry's: replaying an
     *                               index would break the no-ABA guarantee, so it is a bug, not input
     */
    public List<Result> applyEntry(Entry entry, long logIndex) {
        if (logIndex <= lastEntryIndex) {
            throw new IllegalStateException("log index " + logIndex + " applied after " + lastEntryIndex);
        }
        lastEntryIndex = logIndex;
        startChanges();
        clusterTime = Math.max(clusterTime, entry.stamp());
        forgetLapsedRequests();
        sessions.expire(clusterTime);
        List<Result> results = new ArrayList<>();
        for (Batch batch : entry.batches()) {
            if (batch.session() == 0) {
                results.addAll(applyRequests(batch, logIndex));
            } else {
                results.addAll(sessions.apply(batch, clusterTime, () -> applyRequests(batch, logIndex)));
            }
        }
        return results;
    }

    private List<Result> applyRequests(Batch batch, long logIndex) {
        List<Result> results = new ArrayList<>(batch.commandCount());
        for (Request request : batch.requests()) {
            results.addAll(applyRequest(request, logIndex));
        }
        return results;
    }

    private List<Result> applyRequest(Request request, long logIndex) {
        String key = request.idempotencyKey();
        long fingerprint = key == null ? 0 : fingerprints.of(request);
        if (key != null) {
            Remembered earlier = remembered.get(key);
            if (earlier != null) {
                if (earlier.fingerprint() == (earlier.canonical() ? fingerprint : wireFingerprint(request))) {
                    return earlier.results();
                }
                return Collections.nCopies(request.commands().size(), new Result.Rejected(
                        "idempotency key '" + key + "' was already used for a different request"));
            }
        }
        List<Result> results = new ArrayList<>(request.commands().size());
        for (Command command : request.commands()) {
            results.add(applyCommand(command, logIndex, clusterTime));
        }
        if (key != null && request.retentionMillis() > 0) {
            long until = clusterTime + Math.min(request.retentionMillis(), Request.MAX_RETENTION_MILLIS);
            remember(key, new Remembered(until, fingerprint, true, List.copyOf(results)));
        }
        return results;
    }

    /**
     * The fingerprint snapshot formats 2 and 3 remembered: the first 8 bytes of the SHA-256 of the
     * request's commands as the wire codec encodes them. Only compared with what such a snapshot holds;
     * those entries lapse within {@link Request#MAX_RETENTION_MILLIS} of cluster time, after which
     * nothing calls this.
     */
    private static long wireFingerprint(Request request) {
        try {
            return ByteBuffer.wrap(MessageDigest.getInstance("SHA-256")
                    .digest(Codec.encodeRequest(Request.of(request.commands())))).getLong();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    private void forgetLapsedRequests() {
        for (Iterator<Expiring> it = rememberedUntil.iterator(); it.hasNext(); ) {
            Expiring e = it.next();
            if (e.at() > clusterTime) {
                break;
            }
            it.remove();
            Remembered r = remembered.remove(e.id());
            rememberedBytes -= Footprint.remembered(e.id(), r.results());
        }
    }

    private void remember(String key, Remembered r) {
        remembered.put(key, r);
        rememberedUntil.add(new Expiring(r.until(), key));
        rememberedBytes += Footprint.remembered(key, r.results());
    }

    /**
     * Applies one command at {@code logIndex} and {@code clusterTime}. A failed condition writes nothing
     * and returns the current state; an invalid command writes nothing and returns {@link Result.Rejected}.
     * What it changed is what {@link #changedKeys} reports until the next command or entry applies.
     */
    public Result apply(Command command, long logIndex, long clusterTime) {
        startChanges();
        return applyCommand(command, logIndex, clusterTime);
    }

    private Result applyCommand(Command command, long logIndex, long clusterTime) {
        try {
            command.validate();
        } catch (InvalidCommandException e) {
            return new Result.Rejected(e.getMessage());
        }
        if (command instanceof Command.Transaction t) {
            return transaction(t, logIndex, clusterTime);
        }
        if (command instanceof Command.Sweep s) {
            return sweep(s, logIndex, clusterTime);
        }
        if (command instanceof Command.OpenSession o) {
            return sessions.open(o, clusterTime);
        }
        if (command instanceof Command.SetQuota q) {
            if (!(q.ifUnset() && quotaSet)) {
                quota = q.bytes();
                quotaSet = true;
            }
            return new Result.Quota(used(), quota);
        }
        if (command instanceof Command.AuthChange a) {
            try {
                auth = auth.apply(a);
            } catch (InvalidCommandException e) {
                return new Result.Rejected(e.getMessage());
            }
            return new Result.AuthState(auth.withoutSecrets());
        }
        Command.Op op = (Command.Op) command;
        String id = Keys.normalize(op.key());
        Item current = items.get(id);
        if (!holds(op, current, clusterTime)) {
            count(id, op.key(), false, false);
            return new Result.Write(false, current == null ? op.key() : current.key(), current);
        }
        Planned write = plan(op, current, logIndex, clusterTime);
        Result overQuota = overQuota(write.growth());
        count(id, op.key(), true, overQuota == null);
        if (overQuota != null) {
            return overQuota;
        }
        Item after = commit(write, logIndex);
        return new Result.Write(true, after != null ? after.key() : current.key(), after);
    }

    /**
     * The refusal of a write that would add {@code growth} to the state and take it over its quota; null
     * when it may go ahead. A write that adds nothing is never refused, so deletes always free space.
     */
    private Result overQuota(long growth) {
        long used = used();
        return growth > 0 && used + growth > quota ? new Result.QuotaExceeded(used, quota, growth) : null;
    }

    /**
     * The results apply would give {@code batch} now if every one of its commands is a write refused for
     * the quota (conditions that hold, and growth past what is left); null otherwise, or when the batch
     * carries an idempotency key or would not apply (a resend, a closed session). Changes nothing: how
     * the leader answers a batch that cannot fit without putting it in the log. Entries in flight may
     * free space meanwhile, so a batch refused here may fit a moment later: a refusal says "not now",
     * as one from apply does.
     */
    public List<Result> refusalsForQuota(Batch batch) {
        if (batch.session() != 0 && !sessions.wouldApply(batch)) {
            return null;
        }
        List<Result> refusals = new ArrayList<>(batch.commandCount());
        for (Request request : batch.requests()) {
            if (request.idempotencyKey() != null) {
                return null;
            }
            for (Command command : request.commands()) {
                Result refused = refusalForQuota(command);
                if (refused == null) {
                    return null;
                }
                refusals.add(refused);
            }
        }
        return refusals;
    }

    /** The quota refusal apply would give {@code command} now, or null when it would give anything else. */
    private Result refusalForQuota(Command command) {
        try {
            command.validate();
        } catch (InvalidCommandException e) {
            return null;
        }
        List<Command.Op> ops;
        if (command instanceof Command.Transaction t) {
            ops = t.ops();
        } else if (command instanceof Command.Op op) {
            ops = List.of(op);
        } else {
            return null;
        }
        long growth = 0;
        for (Command.Op op : ops) {
            Item current = items.get(Keys.normalize(op.key()));
            if (!holds(op, current, clusterTime)) {
                return null;
            }
            growth += plan(op, current, lastEntryIndex + 1, clusterTime).growth();
        }
        return overQuota(growth);
    }

    /** Whether an operation's condition holds against the item its key names now. */
    private static boolean holds(Command.Op op, Item current, long clusterTime) {
        long currentIndex = current == null ? 0 : current.index();
        if (op instanceof Command.Put p) {
            if (p.index() == 0) {
                return current == null || (p.expiredIsAbsent() && current.expiredAt(clusterTime));
            }
            // A renewal (a ttl at an index) of a lease that has run out is refused: it is up for grabs.
            return p.index() == currentIndex && !(p.ttlMillis() > 0 && current.expiredAt(clusterTime));
        }
        if (op instanceof Command.Check || op instanceof Command.PutDocument) {
            return op.index() == currentIndex;
        }
        // Delete, DeleteDocument: a positive index (validated) that must match a present item.
        return current != null && op.index() == currentIndex;
    }

    /**
     * What an operation whose condition holds will write: the item its key names afterwards (null when it
     * deletes it), and for a document operation the document before and after. Planned before anything
     * is written, so a write over the quota, or a transaction with one, is refused whole.
     */
    private record Planned(Command.Op op, Item current, Item after, Document documentBefore, Document documentAfter) {
        long growth() {
            return Footprint.item(after) - Footprint.item(current)
                    + Footprint.document(documentAfter) - Footprint.document(documentBefore);
        }
    }

    private Planned plan(Command.Op op, Item current, long logIndex, long clusterTime) {
        if (op instanceof Command.Put p) {
            boolean creates = current == null || p.index() == 0;
            long expiresAt = p.ttlMillis() > 0 ? clusterTime + p.ttlMillis() : Expiry.fromMetadata(p.metadata());
            String metadata = p.ttlMillis() > 0 ? Expiry.withExpiry(p.metadata(), expiresAt) : p.metadata();
            // A new item (or one replacing an expired holder) takes this spelling and this index as its creation.
            return new Planned(op, current, new Item(creates ? p.key() : current.key(), p.value(), logIndex,
                    creates ? logIndex : current.createdIndex(), expiresAt, metadata), null, null);
        }
        if (op instanceof Command.PutDocument d) {
            Document existing = documents.get(Keys.normalize(d.id()));
            String spelling = existing == null ? d.id() : existing.id();
            Item guard = new Item(Document.guardKey(spelling), Json.write(Map.of("Id", spelling)), logIndex,
                    current == null ? logIndex : current.createdIndex(), 0, null);
            return new Planned(op, current, guard, existing, new Document(spelling, d.json(), logIndex));
        }
        if (op instanceof Command.DeleteDocument d) {
            return new Planned(op, current, null, documents.get(Keys.normalize(d.id())), null);
        }
        if (op instanceof Command.Delete) {
            return new Planned(op, current, null, null, null);
        }
        return new Planned(op, current, current, null, null); // Check writes nothing
    }

    /** Writes what {@link #plan} planned; returns the item its key names afterwards (null if none). */
    private Item commit(Planned write, long logIndex) {
        if (write.op() instanceof Command.Check) {
            return write.current();
        }
        if (write.op() instanceof Command.DocumentOp d) {
            String docId = Keys.normalize(d.id());
            documentBytes += Footprint.document(write.documentAfter()) - Footprint.document(write.documentBefore());
            if (write.documentAfter() == null) {
                documents.remove(docId);
            } else {
                documents.put(docId, write.documentAfter());
            }
        }
        if (write.after() == null) {
            removeItem(write.current(), logIndex);
            return null;
        }
        return putItem(write.after());
    }

    private Result transaction(Command.Transaction t, long logIndex, long clusterTime) {
        List<Command.Op> ops = t.ops();
        String[] ids = new String[ops.size()];
        Item[] current = new Item[ops.size()];
        boolean[] held = new boolean[ops.size()];
        List<Result.Conflict> conflicts = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            Command.Op op = ops.get(i);
            ids[i] = Keys.normalize(op.key());
            current[i] = items.get(ids[i]);
            held[i] = holds(op, current[i], clusterTime);
            if (!held[i]) {
                conflicts.add(new Result.Conflict(op.key(), op.index(), current[i] == null ? 0 : current[i].index()));
            }
        }
        // Keys are distinct (validated), so no operation sees another's write: each finds its item as read.
        Planned[] writes = new Planned[ops.size()];
        long growth = 0;
        for (int i = 0; conflicts.isEmpty() && i < ops.size(); i++) {
            writes[i] = plan(ops.get(i), current[i], logIndex, clusterTime);
            growth += writes[i].growth();
        }
        Result overQuota = conflicts.isEmpty() ? overQuota(growth) : null;
        for (int i = 0; i < ops.size(); i++) {
            count(ids[i], ops.get(i).key(), held[i], conflicts.isEmpty() && overQuota == null);
        }
        if (!conflicts.isEmpty()) {
            return new Result.Txn(false, 0, conflicts);
        }
        if (overQuota != null) {
            return overQuota;
        }
        for (Planned write : writes) {
            commit(write, logIndex);
        }
        return new Result.Txn(true, logIndex, List.of());
    }

    private void count(String id, String key, boolean held, boolean committed) {
        if (contention != null) {
            contention.evaluated(id, key, held, committed);
        }
    }

    /** Where evaluated conditions are counted from now on (null: nowhere). Changes no state. */
    public void countContentionIn(KeyContention contention) {
        this.contention = contention;
    }

    private Result sweep(Command.Sweep sweep, long logIndex, long clusterTime) {
        int removed = 0;
        for (Command.KeyIndex candidate : sweep.candidates()) {
            Item item = items.get(Keys.normalize(candidate.key()));
            // Re-checked here: the item may have been renewed or replaced since the sweep was proposed.
            if (item != null && item.index() == candidate.index() && item.expiredAt(clusterTime)) {
                removeItem(item, logIndex);
                removed++;
            }
        }
        return new Result.Swept(removed);
    }

    private Item putItem(Item item) {
        String id = Keys.normalize(item.key());
        items.put(id, item);
        tombstones.remove(id);
        changed.add(id);
        return item;
    }

    private void removeItem(Item item, long logIndex) {
        String id = Keys.normalize(item.key());
        items.remove(id);
        tombstones.remove(id);
        tombstones.put(id, logIndex);
        changed.add(id);
        if (tombstones.size() > MAX_TOMBSTONES) {
            Iterator<Map.Entry<String, Long>> oldest = tombstones.entrySet().iterator();
            Map.Entry<String, Long> forgotten = oldest.next();
            tombstoneWatermark = Math.max(tombstoneWatermark, forgotten.getValue());
            // Its last change is now the watermark's to vouch for; a watch on it is looked at again.
            changed.add(forgotten.getKey());
            oldest.remove();
        }
    }

    // ---- what the last entry changed (for watches; not state)

    /** Forgets what the previous entry changed; called as an entry (or a lone command) starts to apply. */
    private void startChanges() {
        if (changed.size() > 1024) {
            // A large entry (a sweep, a big transaction) does not pin its capacity for the small ones after it.
            changed = new ArrayList<>();
            changedView = Collections.unmodifiableList(changed);
        } else {
            changed.clear();
        }
        watermarkBefore = tombstoneWatermark;
    }

    /**
     * The normalized keys whose {@link #lastChange} the last applied entry (or lone {@link #apply}
     * command) moved: every key it put or deleted (puts, deletes, transactions' writes, documents' guard
     * items, sweeps' deletions), and any key whose tombstone it forgot to make room. In the order written;
     * a key written twice is listed twice. A refused condition or a check lists nothing. Valid until the
     * next entry applies; not state: no replica's apply reads it. Together with {@link #watermarkBefore}
     * it names every watch whose {@link #watched} answer that entry can have changed.
     */
    List<String> changedKeys() {
        return changedView;
    }

    /**
     * The tombstone watermark before the last applied entry. A key with neither an item nor a
     * tombstone has the watermark as its {@link #lastChange}, so when an entry raised the watermark from
     * this to {@link #tombstoneWatermark()}, a watch on such a key after an index in between may now
     * report a change although its key is in no {@link #changedKeys}.
     */
    long watermarkBefore() {
        return watermarkBefore;
    }

    // ---- reads

    /**
     * The answer to a read that is not a watch ({@code get}, {@code getAll}, {@code list},
     * {@code getDocument}, {@code stats}); {@code appliedIndex} is what {@code stats} reports.
     *
     * @throws InvalidCommandException for a query that is no such read
     */
    public Result answer(Query query, long appliedIndex) {
        if (query instanceof Query.Get g) {
            return new Result.Found(get(g.key()));
        } else if (query instanceof Query.GetAll g) {
            return new Result.Items(getAll(g.keys()));
        } else if (query instanceof Query.ListItems l) {
            return new Result.Items(list(l.prefix(), l.start(), l.pageSize()));
        } else if (query instanceof Query.GetDocument d) {
            return new Result.DocumentFound(document(d.id()));
        } else if (query instanceof Query.Stats) {
            return new Result.Stats(appliedIndex, clusterTime, size(), used(), quota);
        } else if (query instanceof Query.AuthStatus) {
            return new Result.AuthState(auth.withoutSecrets());
        }
        throw new InvalidCommandException("unknown query " + query);
    }

    /**
     * A watch's answer now: changed when the key was put or deleted at an index above the watch's
     * {@code afterIndex}, with the index of that last change and the key's item.
     */
    public Result.Watched watched(Query.Watch watch) {
        long lastChange = lastChange(watch.key());
        return new Result.Watched(lastChange > watch.afterIndex(), lastChange, get(watch.key()));
    }

    /** The item under {@code key} (compared case-insensitively), or null. */
    public Item get(String key) {
        return items.get(Keys.normalize(key));
    }

    /** The items under {@code keys} that exist, in key order, each once. */
    public List<Item> getAll(Collection<String> keys) {
        TreeSet<String> ids = new TreeSet<>(ItemTable::compareIds);
        for (String key : keys) {
            ids.add(Keys.normalize(key));
        }
        List<Item> found = new ArrayList<>(ids.size());
        for (String id : ids) {
            Item item = items.get(id);
            if (item != null) {
                found.add(item);
            }
        }
        return found;
    }

    /** Items whose key starts with {@code prefix} (case-insensitively), in key order, after skipping {@code start}. */
    public List<Item> list(String prefix, int start, int pageSize) {
        return items.list(Keys.normalize(prefix), start, pageSize);
    }

    /** The document under {@code id} (case-insensitively), or null. */
    public Document document(String id) {
        return documents.get(Keys.normalize(id));
    }

    /**
     * The index of the last put or delete of {@code key} that this store can vouch for: the item's
     * index, its deletion's, or, for a key whose deletion was forgotten, an index it cannot have
     * changed after. A watch on an index at or above it has nothing to report yet.
     */
    public long lastChange(String key) {
        String id = Keys.normalize(key);
        long index = items.indexOf(id);
        if (index >= 0) {
            return index;
        }
        Long deleted = tombstones.get(id);
        return deleted != null ? deleted : tombstoneWatermark;
    }

    /** Up to {@code limit} items that have expired at {@code time}, soonest first: what the leader proposes to sweep. */
    public List<Command.KeyIndex> expiredAt(long time, int limit) {
        return items.expiredAt(time, limit);
    }

    public int size() {
        return items.size();
    }

    /** What the state counts for against its quota: the sum of its parts' {@link Footprint}s. */
    public long used() {
        return items.footprint() + documentBytes + rememberedBytes + sessions.footprint();
    }

    /** The storage quota: writes that would take {@link #used} past it are refused. */
    public long quota() {
        return quota;
    }

    boolean quotaSet() {
        return quotaSet;
    }

    /** The permission table, token hashes included. */
    public AuthTable auth() {
        return auth;
    }

    /** Cluster time in epoch milliseconds: the greatest leader stamp applied so far. */
    public long clusterTime() {
        return clusterTime;
    }

    /** The log index of the last entry applied (0 before any). */
    public long lastEntryIndex() {
        return lastEntryIndex;
    }

    // ---- snapshot access (same package)

    Iterable<Item> items() {
        return items.all();
    }

    Collection<Document> documents() {
        return Collections.unmodifiableCollection(documents.values());
    }

    Map<String, Long> tombstones() {
        return Collections.unmodifiableMap(tombstones);
    }

    long tombstoneWatermark() {
        return tombstoneWatermark;
    }

    Map<String, Remembered> remembered() {
        return Collections.unmodifiableMap(remembered);
    }

    ClientSessions sessions() {
        return sessions;
    }

    /** Open client sessions. */
    public int sessionCount() {
        return sessions.size();
    }

    /** Rebuilds a store from a snapshot's contents (tests; a snapshot file is read in parts: {@link #restoring}). */
    static CompareExchangeStore restore(long clusterTime, long lastEntryIndex, Iterable<Item> items,
                                        Iterable<Document> documents, Map<String, Long> tombstones,
                                        long tombstoneWatermark, Map<String, Remembered> remembered,
                                        Iterable<ClientSessions.Session> sessions) {
        CompareExchangeStore store = restoring(clusterTime, lastEntryIndex);
        items.forEach(store::restoreItem);
        documents.forEach(store::restoreDocument);
        store.restoreTombstones(tombstones, tombstoneWatermark);
        remembered.forEach(store::restoreRemembered);
        sessions.forEach(store::restoreSession);
        return store.restored();
    }

    /**
     * An empty store to read a snapshot into, part by part, ending with {@link #restored}: a snapshot's
     * items go straight into the table as they are read, never into a list of them all first.
     */
    static CompareExchangeStore restoring(long clusterTime, long lastEntryIndex) {
        CompareExchangeStore store = new CompareExchangeStore();
        store.clusterTime = clusterTime;
        store.lastEntryIndex = lastEntryIndex;
        return store;
    }

    void restoreItem(Item item) {
        if (item.index() > lastEntryIndex) {
            throw new IllegalStateException("item '" + item.key() + "' has index " + item.index()
                    + " beyond the snapshot's " + lastEntryIndex);
        }
        putItem(item);
    }

    void restoreDocument(Document d) {
        documents.put(Keys.normalize(d.id()), d);
        documentBytes += Footprint.document(d);
    }

    void restoreTombstones(Map<String, Long> tombstones, long watermark) {
        this.tombstones.putAll(tombstones);
        tombstoneWatermark = watermark;
    }

    void restoreRemembered(String key, Remembered r) {
        remember(key, r);
    }

    void restoreSession(ClientSessions.Session session) {
        sessions.restore(session);
    }

    /** Sets the quota as a snapshot holds it; {@code set} false: none was ever set, the default applies. */
    void restoreQuota(long quota, boolean set) {
        this.quota = quota;
        this.quotaSet = set;
    }

    void restoreAuth(AuthTable table) {
        this.auth = table;
    }

    CompareExchangeStore restored() {
        startChanges(); // restoring is no entry: it changed nothing a watch could have seen
        return this;
    }
}
