package io.ratchet.statemachine;

import io.ratchet.protocol.AuthTable;
import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Command.Settle.Step;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Entry;
import io.ratchet.protocol.Expiry;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.AuthTableCodec;
import io.ratchet.statemachine.RememberedRequests.Remembered;
import io.ratchet.statemachine.kv.Cursor;
import io.ratchet.statemachine.kv.KeyValueStore;
import io.ratchet.statemachine.kv.MemoryKeyValueStore;
import io.ratchet.statemachine.kv.Overlay;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
    /** An import commits what it staged each time this much has gathered, so it never holds a whole state. */
    private static final long IMPORT_CHUNK_BYTES = 4L << 20;

    /** The state: the store, with what the entry being applied has written so far staged above it. */
    private final Overlay state;
    /** Items by normalized (lower-case) key, in key order, with their expiry order. */
    private final Items items;
    private final Tombstones tombstones;
    private final RememberedRequests remembered;
    private final RequestFingerprint fingerprints = new RequestFingerprint();
    private final ClientSessions sessions;
    /** Keys held by transactions across groups, and the records of those this group is the primary of. */
    private final Intents intents;
    /** The documents' {@link Footprint}s, summed (the items' own their table). */
    private long documentBytes;
    /** The most the state may count (see {@link Footprint}); writes that would pass it are refused. */
    private long quota;
    /** Whether a {@link Command.SetQuota} ever applied (else {@link #quota} is the default). */
    private boolean quotaSet;
    /**
     * Who may do what. Not counted against the quota: a few users and grants, and refusing a change to
     * them would refuse the administrator the means to manage a full cluster.
     */
    private AuthTable auth;
    private long clusterTime;
    private long lastEntryIndex;
    /** The Raft term of the last entry (0 when the caller does not say): kept so the state names its entry. */
    private long lastEntryTerm;
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

    /** An empty store in memory, for tests: the same rules, nothing kept. */
    public CompareExchangeStore() {
        this(new MemoryKeyValueStore());
    }

    /**
     * The state {@code kv} holds (an empty one when it holds none). Changes are written to it entry by
     * entry, each entry's whole with its index.
     *
     * @throws IllegalStateException when it holds a layout this build does not read
     */
    public CompareExchangeStore(KeyValueStore kv) {
        this.state = new Overlay(kv);
        StoreMeta meta = StoreMeta.read(kv);
        if (meta == null) {
            meta = StoreMeta.empty(Limits.DEFAULT_QUOTA_BYTES);
        }
        lastEntryIndex = meta.lastEntryIndex();
        lastEntryTerm = meta.lastEntryTerm();
        clusterTime = meta.clusterTime();
        items = new Items(state, meta.itemCount(), meta.itemFootprint());
        documentBytes = meta.documentBytes();
        remembered = new RememberedRequests(state, meta.rememberedBytes());
        tombstones = new Tombstones(state, meta.tombstoneWatermark());
        quota = meta.quota();
        quotaSet = meta.quotaSet();
        byte[] table = kv.get(StateKeys.single(StateKeys.AUTH));
        auth = table == null ? AuthTable.EMPTY : SnapshotCodec.parse(table, AuthTableCodec::read);
        sessions = new ClientSessions(state);
        intents = new Intents(state);
        watermarkBefore = tombstones.watermark();
    }

    /** Whether the store holds a state (any entry applied, or imported). */
    public static boolean holdsState(KeyValueStore kv) {
        return StoreMeta.read(kv) != null;
    }

    private StoreMeta meta() {
        return new StoreMeta(lastEntryIndex, lastEntryTerm, clusterTime, items.size(), items.footprint(),
                documentBytes, remembered.bytes(), tombstones.size(), tombstones.watermark(), quota, quotaSet);
    }

    /** Writes what the entry (or command) staged, with the store's position, at once. */
    private void commit() {
        state.put(StoreMeta.key(), meta().encode());
        state.commit();
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
        return applyEntry(entry, logIndex, lastEntryTerm);
    }

    /**
     * {@link #applyEntry(Entry, long)}, recording {@code logTerm} as the term of the entry: the state then
     * names the entry it holds by index and term, which is what Raft resumes from after a restart.
     *
     * @throws io.ratchet.statemachine.kv.StorageException when the store cannot write: the entry is then
     *                                                     not applied, and this store must not be used on
     */
    public List<Result> applyEntry(Entry entry, long logIndex, long logTerm) {
        if (logIndex <= lastEntryIndex) {
            throw new IllegalStateException("log index " + logIndex + " applied after " + lastEntryIndex);
        }
        lastEntryIndex = logIndex;
        lastEntryTerm = logTerm;
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
        commit();
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
        Result.Locked locked = lockedFor(request);
        if (locked != null) {
            // Refused whole, and not remembered: sent again once the transaction is settled, it applies.
            return Collections.nCopies(request.commands().size(), locked);
        }
        List<Result> results = new ArrayList<>(request.commands().size());
        for (Command command : request.commands()) {
            results.add(applyCommand(command, logIndex, clusterTime));
        }
        if (key != null && request.retentionMillis() > 0) {
            long until = clusterTime + Math.min(request.retentionMillis(), Request.MAX_RETENTION_MILLIS);
            remembered.put(key, new Remembered(until, fingerprint, true, List.copyOf(results)));
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

    /**
     * The refusal of a request one of whose writes or checks names a key a transaction across groups holds;
     * null when none does. (A prepare judges its own keys: one of its own transaction is no obstacle; a sweep
     * passes over a held item.)
     */
    private Result.Locked lockedFor(Request request) {
        if (intents.isEmpty()) {
            return null;
        }
        for (Command command : request.commands()) {
            if (command.kind() == Command.Kind.PREPARE || command.kind() == Command.Kind.SWEEP) {
                continue;
            }
            if (command instanceof Command.Add add) {
                Intents.Intent held = intents.on(Keys.normalize(add.key()));
                if (held != null) {
                    return new Result.Locked(add.key(), held.txn());
                }
                continue;
            }
            for (Command.Op op : ops(command)) {
                Intents.Intent held = intents.on(Keys.normalize(op.key()));
                if (held != null) {
                    return new Result.Locked(op.key(), held.txn());
                }
            }
        }
        return null;
    }

    private void forgetLapsedRequests() {
        remembered.forgetLapsed(clusterTime);
    }

    /**
     * Applies one command at {@code logIndex} and {@code clusterTime}. A failed condition writes nothing
     * and returns the current state; an invalid command writes nothing and returns {@link Result.Rejected}.
     * What it changed is what {@link #changedKeys} reports until the next command or entry applies.
     */
    public Result apply(Command command, long logIndex, long clusterTime) {
        startChanges();
        Result result = applyCommand(command, logIndex, clusterTime);
        commit();
        return result;
    }

    private Result applyCommand(Command command, long logIndex, long clusterTime) {
        try {
            command.validate();
        } catch (InvalidCommandException e) {
            return new Result.Rejected(e.getMessage());
        }
        return switch (command.kind()) {
            case PUT, DELETE -> write((Command.Op) command, logIndex, clusterTime);
            case TRANSACTION -> transaction((Command.Transaction) command, logIndex, clusterTime);
            case SWEEP -> sweep((Command.Sweep) command, logIndex, clusterTime);
            case OPEN_SESSION -> sessions.open((Command.OpenSession) command, clusterTime);
            case SET_QUOTA -> setQuota((Command.SetQuota) command);
            case AUTH_CHANGE -> changeAuth((Command.AuthChange) command);
            case PREPARE -> prepare((Command.Prepare) command, logIndex, clusterTime);
            case SETTLE -> settle((Command.Settle) command, clusterTime);
            case FENCE -> fence((Command.Fence) command, clusterTime);
            case ADD -> add((Command.Add) command, logIndex, clusterTime);
        };
    }

    /**
     * Adds to the integer under the key ({@link Command.Add}): no condition, so it never conflicts. Counted
     * as a condition that held, committed unless refused, so a contended key's counts show adds as commits
     * of one attempt each.
     */
    private Result add(Command.Add add, long logIndex, long clusterTime) {
        String id = Keys.normalize(add.key());
        Item current = items.get(id);
        Result refused = notAddable(add, current, clusterTime);
        if (refused != null) {
            count(id, add.key(), true, false, 0);
            return refused;
        }
        Item after = added(add, current, logIndex, clusterTime);
        Result overQuota = overQuota(Footprint.item(after) - Footprint.item(current));
        count(id, add.key(), true, overQuota == null, logIndex);
        if (overQuota != null) {
            return overQuota;
        }
        return new Result.Write(true, after.key(), putItem(after));
    }

    /**
     * The item an add counts from: none when the key is absent or its item has expired at {@code clusterTime}.
     * An expired item is gone to every condition that asks (a lease up for grabs); an add to it starts from 0,
     * as a new item without its metadata, rather than keeping an expiry already passed, under which the sweep
     * would remove the sum right after acknowledging it.
     */
    private static Item addedTo(Item current, long clusterTime) {
        return current == null || current.expiredAt(clusterTime) ? null : current;
    }

    /** Why {@code add} cannot apply to {@code current} ({@link Result.NotAnInteger}, {@link Result.Overflow}); null when it can. */
    private static Result notAddable(Command.Add add, Item current, long clusterTime) {
        Item live = addedTo(current, clusterTime);
        if (live == null) {
            return null; // 0 plus any long fits
        }
        Long value = Command.Add.integerOf(live.value());
        if (value == null) {
            return new Result.NotAnInteger(live.key(), live);
        }
        long sum = value + add.delta();
        // Overflow when both operands have the sign the sum lacks (Math.addExact's test, without its exception).
        if (((value ^ sum) & (add.delta() ^ sum)) < 0) {
            return new Result.Overflow(live.key(), live, add.delta());
        }
        return null;
    }

    /** The item {@code add} leaves at {@code logIndex}; only for an add that {@link #notAddable} lets through. */
    private static Item added(Command.Add add, Item current, long logIndex, long clusterTime) {
        Item live = addedTo(current, clusterTime);
        if (live == null) {
            return new Item(add.key(), Long.toString(add.delta()), logIndex, logIndex, 0, null);
        }
        long sum = Command.Add.integerOf(live.value()) + add.delta();
        // In place: the first spelling, metadata, expiry and created index stay; only the value and index move.
        return new Item(live.key(), Long.toString(sum), logIndex, live.createdIndex(), live.expiresAt(), live.metadata());
    }

    private Result write(Command.Op op, long logIndex, long clusterTime) {
        String id = Keys.normalize(op.key());
        Item current = items.get(id);
        if (!holds(op, current, clusterTime)) {
            count(id, op.key(), false, false, 0);
            return new Result.Write(false, current == null ? op.key() : current.key(), current);
        }
        Planned write = plan(op, current, logIndex, clusterTime);
        Result overQuota = overQuota(write.growth());
        count(id, op.key(), true, overQuota == null, logIndex);
        if (overQuota != null) {
            return overQuota;
        }
        Item after = commit(write, logIndex);
        return new Result.Write(true, after != null ? after.key() : current.key(), after);
    }

    private Result setQuota(Command.SetQuota q) {
        if (!(q.ifUnset() && quotaSet)) {
            quota = q.bytes();
            quotaSet = true;
        }
        return new Result.Quota(used(), quota);
    }

    private Result changeAuth(Command.AuthChange change) {
        try {
            auth = auth.apply(change);
        } catch (InvalidCommandException e) {
            return new Result.Rejected(e.getMessage());
        }
        storeAuth();
        return new Result.AuthState(auth.withoutSecrets());
    }

    private void storeAuth() {
        AuthTable table = auth;
        state.put(StateKeys.single(StateKeys.AUTH), SnapshotCodec.bytes(out -> AuthTableCodec.write(out, table)));
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

    /**
     * Whether applying {@code batch} now would add to the items or documents: one of its writes has a
     * condition that holds and grows the state. Changes nothing. How the leader tells, when its disk is at
     * its floor, the writes it refuses from those that free or keep space (deletes, writes in place).
     */
    public boolean grows(Batch batch) {
        for (Request request : batch.requests()) {
            for (Command command : request.commands()) {
                try {
                    command.validate();
                } catch (InvalidCommandException e) {
                    continue; // apply refuses it: it writes nothing
                }
                if (command instanceof Command.Add add) {
                    if (addGrowth(add) > 0) {
                        return true;
                    }
                    continue;
                }
                for (Command.Op op : ops(command)) {
                    Item current = items.get(Keys.normalize(op.key()));
                    if (holds(op, current, clusterTime) && plan(op, current, lastEntryIndex + 1, clusterTime).growth() > 0) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** The quota refusal apply would give {@code command} now, or null when it would give anything else. */
    private Result refusalForQuota(Command command) {
        try {
            command.validate();
        } catch (InvalidCommandException e) {
            return null;
        }
        if (command instanceof Command.Add add) {
            return overQuota(addGrowth(add));
        }
        List<Command.Op> ops = ops(command);
        if (ops.isEmpty()) {
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

    /**
     * The conditional write of each request of {@code batch} when every request is one put or delete naming an
     * index (not 0): the writes a leader may refuse before the log once the index they name is replaced
     * ({@link KeyContention#replacedBelow}). Empty when the batch is any other.
     */
    public static List<Command.Op> conditionalWrites(Batch batch) {
        List<Command.Op> writes = null; // made for a batch that qualifies: most do not (a reservation names index 0)
        for (Request request : batch.requests()) {
            if (request.commands().size() != 1) {
                return List.of();
            }
            Command command = request.commands().get(0);
            if (!(command instanceof Command.Op op) || (command.kind() != Command.Kind.PUT && command.kind() != Command.Kind.DELETE)
                    || op.index() == 0) {
                return List.of();
            }
            if (writes == null) {
                writes = new ArrayList<>(batch.requests().size());
            }
            writes.add(op);
        }
        return writes == null ? List.of() : writes;
    }

    /**
     * The results apply would give {@code batch} against the state in which each of its writes'
     * ({@link #conditionalWrites}) keys was read as {@code found} (a get's {@link Result.Found} or
     * {@link Result.Locked}, in the writes' order): when every condition fails there and the batch would be
     * applied, not answered from its session or its idempotency key. Null when one might hold, or the batch is
     * a resend (its session, or a request's idempotency key, has results already), or its session is gone: the
     * log then decides. A refusal is not remembered: sent again, the request is judged again, and its index,
     * replaced, stays so. Writes nothing; counts each refusal as contention.
     */
    public List<Result> refusalsBeforeLog(Batch batch, List<Command.Op> writes, List<Result> found) {
        if (batch.session() != 0 && !sessions.isNew(batch)) {
            return null;
        }
        for (Request request : batch.requests()) {
            if (request.idempotencyKey() != null && remembered.get(request.idempotencyKey()) != null) {
                return null;
            }
        }
        List<Result> results = new ArrayList<>(writes.size());
        for (int i = 0; i < writes.size(); i++) {
            Command.Op op = writes.get(i);
            Result read = found.get(i);
            if (read instanceof Result.Locked locked) {
                results.add(locked);
            } else if (read instanceof Result.Found f && (f.item() == null || f.item().index() != op.index())) {
                results.add(new Result.Write(false, f.item() == null ? op.key() : f.item().key(), f.item()));
            } else {
                return null;
            }
        }
        if (contention != null) {
            writes.forEach(op -> contention.refusedBeforeLog(Keys.normalize(op.key()), op.key()));
        }
        return results;
    }

    /** What {@code add} would add to the state if applied now; 0 when it would be refused (or shrinks nothing). */
    private long addGrowth(Command.Add add) {
        Item current = items.get(Keys.normalize(add.key()));
        if (notAddable(add, current, clusterTime) != null) {
            return 0;
        }
        return Footprint.item(added(add, current, lastEntryIndex + 1, clusterTime)) - Footprint.item(current);
    }

    /**
     * The operations whose conditions a command checks and whose writes it makes; none when it writes no item
     * under a condition (an add writes one, with no condition: its callers handle it apart).
     */
    static List<Command.Op> ops(Command command) {
        return switch (command.kind()) {
            case PUT, DELETE -> List.of((Command.Op) command);
            case TRANSACTION -> ((Command.Transaction) command).ops();
            case PREPARE -> ((Command.Prepare) command).ops();
            case SWEEP, OPEN_SESSION, SET_QUOTA, AUTH_CHANGE, SETTLE, FENCE, ADD -> List.of();
        };
    }

    /** Whether an operation's condition holds against the item its key names now. */
    private static boolean holds(Command.Op op, Item current, long clusterTime) {
        long currentIndex = current == null ? 0 : current.index();
        return switch (op.opKind()) {
            case PUT -> {
                Command.Put p = (Command.Put) op;
                if (p.index() == 0) {
                    yield current == null || (p.expiredIsAbsent() && current.expiredAt(clusterTime));
                }
                // A renewal (a ttl at an index) of a lease that has run out is refused: it is up for grabs.
                yield p.index() == currentIndex && !(p.ttlMillis() > 0 && current.expiredAt(clusterTime));
            }
            case CHECK, PUT_DOCUMENT -> op.index() == currentIndex;
            // a positive index (validated) that must match a present item
            case DELETE, DELETE_DOCUMENT -> current != null && op.index() == currentIndex;
        };
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
        return switch (op.opKind()) {
            case PUT -> {
                Command.Put p = (Command.Put) op;
                boolean creates = current == null || p.index() == 0;
                long expiresAt = p.ttlMillis() > 0 ? clusterTime + p.ttlMillis() : Expiry.fromMetadata(p.metadata());
                String metadata = p.ttlMillis() > 0 ? Expiry.withExpiry(p.metadata(), expiresAt) : p.metadata();
                // A new item (or one replacing an expired holder) takes this spelling and this index as its creation.
                yield new Planned(op, current, new Item(creates ? p.key() : current.key(), p.value(), logIndex,
                        creates ? logIndex : current.createdIndex(), expiresAt, metadata), null, null);
            }
            case PUT_DOCUMENT -> {
                Command.PutDocument d = (Command.PutDocument) op;
                Document existing = document(d.id());
                String spelling = existing == null ? d.id() : existing.id();
                Item guard = new Item(Document.guardKey(spelling), Json.write(Map.of("Id", spelling)), logIndex,
                        current == null ? logIndex : current.createdIndex(), 0, null);
                yield new Planned(op, current, guard, existing, new Document(spelling, d.json(), logIndex));
            }
            case DELETE_DOCUMENT -> new Planned(op, current, null, document(((Command.DeleteDocument) op).id()), null);
            case DELETE -> new Planned(op, current, null, null, null);
            case CHECK -> new Planned(op, current, current, null, null); // writes nothing
        };
    }

    /** Writes what {@link #plan} planned; returns the item its key names afterwards (null if none). */
    private Item commit(Planned write, long logIndex) {
        return switch (write.op().opKind()) {
            case CHECK -> write.current();
            case PUT, DELETE -> commitItem(write, logIndex);
            case PUT_DOCUMENT, DELETE_DOCUMENT -> {
                String docId = Keys.normalize(((Command.DocumentOp) write.op()).id());
                documentBytes += Footprint.document(write.documentAfter()) - Footprint.document(write.documentBefore());
                byte[] key = StateKeys.named(StateKeys.DOCUMENT, docId);
                Document after = write.documentAfter();
                if (after == null) {
                    state.delete(key);
                } else {
                    state.put(key, SnapshotCodec.bytes(out -> SnapshotCodec.writeDocument(out, after)));
                }
                yield commitItem(write, logIndex);
            }
        };
    }

    private Item commitItem(Planned write, long logIndex) {
        if (write.after() == null) {
            removeItem(write.current(), logIndex);
            return null;
        }
        return putItem(write.after());
    }

    private Result transaction(Command.Transaction t, long logIndex, long clusterTime) {
        Evaluated e = evaluate(t.ops(), logIndex, clusterTime, true);
        if (e.refusal() != null) {
            return e.refusal();
        }
        for (Planned write : e.writes()) {
            commit(write, logIndex);
        }
        return new Result.Txn(true, logIndex, List.of());
    }

    /** A transaction's conditions evaluated: its planned writes when all hold and fit, else its refusal. */
    private record Evaluated(Planned[] writes, Result refusal) {
    }

    /**
     * Evaluates every condition of {@code ops} (counting each), then plans their writes at {@code logIndex}
     * and checks them against the quota: what a transaction in one entry and a prepare across groups share.
     */
    private Evaluated evaluate(List<Command.Op> ops, long logIndex, long clusterTime, boolean writesNow) {
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
            boolean committed = conflicts.isEmpty() && overQuota == null;
            // A prepare's writes land at its settle, if at all; a check writes nothing.
            boolean wrote = committed && writesNow && ops.get(i).opKind() != Command.Op.Kind.CHECK;
            count(ids[i], ops.get(i).key(), held[i], committed, wrote ? logIndex : 0);
        }
        if (!conflicts.isEmpty()) {
            return new Evaluated(null, new Result.Txn(false, 0, conflicts));
        }
        return new Evaluated(writes, overQuota);
    }

    // ---- transactions across groups (see Command.Prepare, Command.Settle)

    /**
     * Holds every key of {@code p} for its transaction when each condition holds, no other transaction holds
     * one of them, and the writes fit the quota; writes nothing otherwise. The primary also opens the
     * record. A prepare of a transaction that holds keys here already answers as the first did; one of a
     * transaction this group has decided is not applied again.
     */
    private Result prepare(Command.Prepare p, long logIndex, long clusterTime) {
        Intents.TxnRecord record = intents.record(p.txn());
        Map<String, Intents.Intent> heldAlready = intents.of(p.txn());
        if (!heldAlready.isEmpty() || (record != null && record.state() != Result.TxnState.Record.PENDING)) {
            return txnState(p.txn(), heldAlready.isEmpty() ? 0 : heldAlready.values().iterator().next().index());
        }
        for (Command.Op op : p.ops()) {
            Intents.Intent other = intents.on(Keys.normalize(op.key()));
            if (other != null) {
                return new Result.Locked(op.key(), other.txn());
            }
        }
        Evaluated e = evaluate(p.ops(), logIndex, clusterTime, false);
        if (e.refusal() != null) {
            return e.refusal();
        }
        for (Command.Op op : p.ops()) {
            intents.hold(Keys.normalize(op.key()), new Intents.Intent(p.txn(), p.primary(), logIndex, clusterTime, op));
        }
        if (p.holdsRecord()) {
            intents.putRecord(new Intents.TxnRecord(p.txn(), Result.TxnState.Record.PENDING,
                    clusterTime + p.leaseMillis(), 0, p.groups()));
        }
        return txnState(p.txn(), logIndex);
    }

    /**
     * One step of settling a transaction here (see {@link Command.Settle}): decides its record when this
     * group holds it and it is pending, then, once the outcome here is known, writes or drops its intents.
     */
    private Result settle(Command.Settle s, long clusterTime) {
        Intents.TxnRecord record = intents.record(s.txn());
        Result.TxnState.Record state = record == null ? Result.TxnState.Record.NONE : record.state();
        boolean pending = state == Result.TxnState.Record.PENDING;
        long fence = intents.fencedUntil();
        if (clusterTime < fence && ((s.step() == Step.COMMIT && pending) || (s.step() == Step.FORGET && record != null && !pending))) {
            return new Result.Fenced(fence); // a backup is taking its cut: no decision to commit, no record forgotten
        }
        switch (s.step()) {
            case COMMIT -> {
                if (pending) {
                    intents.putRecord(record.decided(Result.TxnState.Record.COMMITTED, clusterTime));
                }
                if (state != Result.TxnState.Record.ABORTED) {
                    release(s.txn(), true);
                }
            }
            case ABORT -> {
                if (pending) {
                    intents.putRecord(record.decided(Result.TxnState.Record.ABORTED, clusterTime));
                }
                if (state != Result.TxnState.Record.COMMITTED) {
                    release(s.txn(), false);
                }
            }
            case EXPIRE -> {
                if (pending && clusterTime >= record.deadline()) {
                    intents.putRecord(record.decided(Result.TxnState.Record.ABORTED, clusterTime));
                    release(s.txn(), false);
                }
            }
            case FORGET -> {
                if (record != null && !pending) {
                    release(s.txn(), state == Result.TxnState.Record.COMMITTED);
                    intents.forget(s.txn());
                }
            }
        }
        return txnState(s.txn(), 0);
    }

    private Result fence(Command.Fence f, long clusterTime) {
        intents.fence(f.millis() == 0 ? 0 : clusterTime + f.millis());
        return new Result.Fenced(intents.fencedUntil());
    }

    /** Writes (each at its prepare's index and time) or drops every intent {@code txn} holds here. */
    private void release(String txn, boolean commit) {
        for (Intents.Intent intent : intents.release(txn).values()) {
            if (commit && intent.op().opKind() != Command.Op.Kind.CHECK) {
                Item current = items.get(Keys.normalize(intent.op().key()));
                commit(plan(intent.op(), current, intent.index(), intent.time()), intent.index());
            }
        }
    }

    private Result.TxnState txnState(String txn, long index) {
        Intents.TxnRecord record = intents.record(txn);
        return new Result.TxnState(txn, record == null ? Result.TxnState.Record.NONE : record.state(),
                intents.of(txn).size(), index);
    }

    /** Each of {@code txns} as this group sees it, in order ({@link Query.TxnStatus}). */
    public List<Result> txnStates(List<String> txns) {
        List<Result> states = new ArrayList<>(txns.size());
        txns.forEach(txn -> states.add(txnState(txn, 0)));
        return states;
    }

    /**
     * Whether a read must wait before it is answered: a key it names (or, for a listing, a key under its
     * prefix) is held by a transaction across groups, whose outcome this group may not have applied yet.
     */
    public boolean held(Query query) {
        if (intents.isEmpty() || query instanceof Query.Gets) {
            return false; // batched gets are answered one by one: lockOn
        }
        if (query instanceof Query.ListItems list) {
            return intents.anyUnder(Keys.normalize(list.prefix()));
        }
        for (String key : Groups.keys(query)) {
            if (intents.on(Keys.normalize(key)) != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * What settling {@code txn} here would write, as permissions name it: the keys of its puts and deletes,
     * the ids of its documents (its checks write nothing).
     */
    public List<String> heldKeys(String txn) {
        List<String> keys = new ArrayList<>();
        intents.of(txn).values().forEach(i -> {
            if (i.op().opKind() != Command.Op.Kind.CHECK) {
                keys.add(i.op() instanceof Command.DocumentOp d ? d.id() : i.op().key());
            }
        });
        return keys;
    }

    /** A batched get's answer when a transaction across groups holds its key; null when none does. */
    public Result.Locked lockOn(String key) {
        if (intents.isEmpty()) {
            return null; // the usual case, on every batched get: no key normalised for nothing
        }
        Intents.Intent held = intents.on(Keys.normalize(key));
        return held == null ? null : new Result.Locked(key, held.txn());
    }

    /**
     * What the transactions across groups need from this group's leader now, at {@code time} of its clock:
     * records whose lease ran out, decided records to forget once no group holds their intents, and intents
     * older than {@code settleAfterMillis} whose outcome is their primary's to tell. Changes nothing.
     */
    public List<TxnWork> transactionWork(long time, long settleAfterMillis, long forgetAfterMillis) {
        List<TxnWork> work = new ArrayList<>();
        for (Intents.TxnRecord r : intents.records()) {
            if (r.state() == Result.TxnState.Record.PENDING) {
                if (time >= r.deadline()) {
                    work.add(new TxnWork(r.txn(), TxnWork.Kind.EXPIRE, -1, r.groups()));
                }
            } else if (time >= r.decidedAt() + forgetAfterMillis) {
                work.add(new TxnWork(r.txn(), TxnWork.Kind.FORGET, -1, r.groups()));
            }
        }
        Set<String> asked = new HashSet<>();
        for (Intents.Intent intent : intents.intents()) {
            if (intents.record(intent.txn()) == null && time >= intent.time() + settleAfterMillis && asked.add(intent.txn())) {
                work.add(new TxnWork(intent.txn(), TxnWork.Kind.ASK_PRIMARY, intent.primary(), List.of()));
            }
        }
        return work;
    }

    /** {@code writtenAt}: the index the write put on the key when it landed now; 0 when it wrote nothing now. */
    private void count(String id, String key, boolean held, boolean committed, long writtenAt) {
        if (contention != null) {
            contention.evaluated(id, key, held, committed, writtenAt);
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
            if (item != null && item.index() == candidate.index() && item.expiredAt(clusterTime)
                    && intents.on(Keys.normalize(candidate.key())) == null) {
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
        tombstones.add(id, logIndex);
        changed.add(id);
        if (tombstones.size() > MAX_TOMBSTONES) {
            // Its last change is now the watermark's to vouch for; a watch on it is looked at again.
            changed.add(tombstones.forgetOldest());
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
        watermarkBefore = tombstones.watermark();
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
        return switch (query.kind()) {
            case GET -> new Result.Found(get(((Query.Get) query).key()));
            case GET_ALL -> new Result.Items(getAll(((Query.GetAll) query).keys()));
            case LIST_ITEMS -> {
                Query.ListItems l = (Query.ListItems) query;
                yield new Result.Items(list(l.prefix(), l.start(), l.pageSize()));
            }
            case GET_DOCUMENT -> new Result.DocumentFound(document(((Query.GetDocument) query).id()));
            case STATS -> new Result.Stats(appliedIndex, clusterTime, size(), used(), quota);
            case AUTH_STATUS -> new Result.AuthState(auth.withoutSecrets());
            // served by the state machine: a watch waits, gets are answered one by one, contention is the node's,
            // transactions' states one each (txnStates); the front end answers the cluster's shape
            case WATCH, GETS, CONTENTION, SHAPE, TXN_STATUS -> throw new InvalidCommandException("unknown query " + query);
        };
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
        TreeSet<String> ids = new TreeSet<>(Items::compareIds);
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
        byte[] v = state.get(StateKeys.named(StateKeys.DOCUMENT, Keys.normalize(id)));
        return v == null ? null : SnapshotCodec.parse(v, SnapshotCodec::readDocument);
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
        long deleted = tombstones.deletedAt(id);
        return deleted >= 0 ? deleted : tombstones.watermark();
    }

    /** Up to {@code limit} items that have expired at {@code time}, soonest first: what the leader proposes to sweep. */
    public List<Command.KeyIndex> expiredAt(long time, int limit) {
        return items.expiredAt(time, limit);
    }

    public long size() {
        return items.size();
    }

    /** What the state counts for against its quota: the sum of its parts' {@link Footprint}s. */
    public long used() {
        return items.footprint() + documentBytes + remembered.bytes() + sessions.footprint();
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

    /** The Raft term of the last entry applied, as the caller gave it (0 before any). */
    public long lastEntryTerm() {
        return lastEntryTerm;
    }

    // ---- exports and imports (same package): the snapshot format of releases before the disk store

    /** Every item in key order; the caller closes it. */
    Items.CloseableIterator<Item> items() {
        return items.all();
    }

    /** Every document in key order. */
    List<Document> documents() {
        List<Document> all = new ArrayList<>();
        byte[] from = StateKeys.single(StateKeys.DOCUMENT);
        try (Cursor c = state.scan(from, StateKeys.after(from))) {
            while (c.next()) {
                all.add(SnapshotCodec.parse(c.value(), SnapshotCodec::readDocument));
            }
        }
        return all;
    }

    /** Every remembered deletion, oldest first. */
    Map<String, Long> tombstones() {
        Map<String, Long> all = new LinkedHashMap<>();
        tombstones.forEach(all::put);
        return all;
    }

    long tombstoneWatermark() {
        return tombstones.watermark();
    }

    Map<String, Remembered> remembered() {
        Map<String, Remembered> all = new LinkedHashMap<>();
        remembered.forEach(all::put);
        return all;
    }

    ClientSessions sessions() {
        return sessions;
    }

    /** Open client sessions. */
    public int sessionCount() {
        return sessions.size();
    }

    /** Rebuilds a store in memory from a snapshot's contents (tests; a snapshot file is read in parts: {@link #importing}). */
    static CompareExchangeStore restore(long clusterTime, long lastEntryIndex, Iterable<Item> items,
                                        Iterable<Document> documents, Map<String, Long> tombstones,
                                        long tombstoneWatermark, Map<String, Remembered> remembered,
                                        Iterable<ClientSessions.Session> sessions) {
        CompareExchangeStore store = importing(new MemoryKeyValueStore(), clusterTime, lastEntryIndex, 0);
        items.forEach(store::restoreItem);
        documents.forEach(store::restoreDocument);
        store.restoreTombstones(tombstones, tombstoneWatermark);
        remembered.forEach(store::restoreRemembered);
        sessions.forEach(s -> store.restoreSession(s, null));
        return store.restored();
    }

    /**
     * A store to read a snapshot of an earlier release into, part by part, ending with {@link #restored}:
     * what is read goes into {@code kv} in chunks as it is read, never into a list of it all first.
     *
     * @throws IllegalStateException when {@code kv} already holds a state
     */
    static CompareExchangeStore importing(KeyValueStore kv, long clusterTime, long lastEntryIndex, long lastEntryTerm) {
        if (holdsState(kv)) {
            throw new IllegalStateException("a snapshot is imported only into an empty store");
        }
        CompareExchangeStore store = new CompareExchangeStore(kv);
        store.clusterTime = clusterTime;
        store.lastEntryIndex = lastEntryIndex;
        store.lastEntryTerm = lastEntryTerm;
        return store;
    }

    private void importedSome() {
        if (state.stagedBytes() >= IMPORT_CHUNK_BYTES) {
            state.commit(); // no position yet: a store cut off here holds no state and is imported again
        }
    }

    void restoreItem(Item item) {
        if (item.index() > lastEntryIndex) {
            throw new IllegalStateException("item '" + item.key() + "' has index " + item.index()
                    + " beyond the snapshot's " + lastEntryIndex);
        }
        putItem(item);
        importedSome();
    }

    void restoreDocument(Document d) {
        Document copy = d;
        state.put(StateKeys.named(StateKeys.DOCUMENT, Keys.normalize(d.id())),
                SnapshotCodec.bytes(out -> SnapshotCodec.writeDocument(out, copy)));
        documentBytes += Footprint.document(d);
        importedSome();
    }

    /** The deletions, oldest first, and the watermark below them. */
    void restoreTombstones(Map<String, Long> deletions, long watermark) {
        deletions.forEach(tombstones::add);
        tombstones.raiseWatermark(watermark);
        importedSome();
    }

    void restoreRemembered(String key, Remembered r) {
        remembered.put(key, r);
        importedSome();
    }

    void restoreSession(ClientSessions.Session session, List<Result> lastResults) {
        sessions.restore(session, lastResults);
        importedSome();
    }

    /** Sets the quota as a snapshot holds it; {@code set} false: none was ever set, the default applies. */
    void restoreQuota(long quota, boolean set) {
        this.quota = quota;
        this.quotaSet = set;
    }

    void restoreAuth(AuthTable table) {
        this.auth = table;
        storeAuth();
    }

    /** Ends an import: the state and its position are written, and the store holds the snapshot's state. */
    CompareExchangeStore restored() {
        startChanges(); // restoring is no entry: it changed nothing a watch could have seen
        commit();
        return this;
    }

    /** The store this state is kept in. */
    public KeyValueStore keyValueStore() {
        return state.store();
    }
}
