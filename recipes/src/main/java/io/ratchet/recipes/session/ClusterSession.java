package io.ratchet.recipes.session;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Query;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One unit of work over documents and compare-exchange items, committed as one cluster transaction
 * with Atomic Guards, as in RavenDB's cluster-wide sessions.
 *
 * <p><b>Guarantee.</b> {@link #saveChanges()} applies every change the session recorded, all at one
 * log index, or none of them. It is conditioned on what the session read: a document changed or
 * deleted at the guard index its load saw (stored without a load, or loaded as absent: created
 * create-only), an item updated or deleted at the index its read saw. If any of these moved in between
 * (even if its content came back: indexes are never reused), nothing is applied and
 * {@link ConcurrencyException} names the keys. With {@link SessionOptions#validateReads()}, what the
 * session only read is checked as well.
 *
 * <p><b>Reads.</b> Each document and item is read from the cluster at most once per session
 * (linearizably); later loads return the session's view: that read plus the session's own unsaved
 * changes. After a successful save the session goes on from the saved state.
 *
 * <p><b>What the caller owes.</b> Use a session from one thread, for one unit of work. After a
 * {@link ConcurrencyException} or any other failed save the session is unusable (every call throws
 * {@link IllegalStateException}): re-run the unit of work in a new session, from fresh reads
 * ({@link Retry#run} does that). After an {@link UnknownOutcomeException} a save that carried an
 * idempotency key may be resent with {@link #saveChanges(String, Duration)} and the same key: it is
 * applied at most once, and the resend returns the first outcome.
 */
public final class ClusterSession {

    /** A document as the session knows it from the cluster: {@code json} null and index 0 when absent. */
    private record Known(String id, long guardIndex, String json) {
    }

    private enum State { OPEN, FAILED, OUTCOME_UNKNOWN }

    private final ClusterAccess cluster;
    private final SessionOptions options;
    /** Set for sessions that {@link Retry} runs: it saves them itself, once, when the unit returns. */
    private final boolean managed;
    private final SessionCompareExchange compareExchange;
    /** By normalized id: what the cluster had when the session read it, or what the session last saved. */
    private final Map<String, Known> known = new LinkedHashMap<>();
    /** By normalized id, in the order recorded: a PutDocument or DeleteDocument already conditioned. */
    private final Map<String, Command.Op> changes = new LinkedHashMap<>();
    /** Every key this session has sent a write for; what {@link Retry} counts attempts on. */
    private final Set<String> sentKeys = new LinkedHashSet<>();

    private State state = State.OPEN;
    private RuntimeException failure;
    /** The transaction of a save whose outcome is unknown, and its idempotency key: what a resend sends. */
    private List<Command.Op> inFlight;
    private String inFlightKey;

    /** A new unit of work over documents and items, saved as one transaction with Atomic Guards. */
    public static ClusterSession open(RatchetClient client) {
        return open(client, SessionOptions.defaults());
    }

    /** As {@link #open(RatchetClient)}, with options (e.g. validation of what the session only read). */
    public static ClusterSession open(RatchetClient client, SessionOptions options) {
        return new ClusterSession(ClusterAccess.of(client), options, false);
    }

    ClusterSession(ClusterAccess cluster, SessionOptions options, boolean managed) {
        this.cluster = cluster;
        this.options = Objects.requireNonNull(options, "options");
        this.managed = managed;
        this.compareExchange = new SessionCompareExchange(this, cluster);
    }

    // ---- documents

    /**
     * The document under {@code id}, bound to {@code type} with Jackson ({@code JsonNode.class} for the
     * tree), or empty when there is none. Reads the cluster the first time the session names the id.
     *
     * @throws IllegalArgumentException when the document does not bind to {@code type}
     */
    public <T> Optional<T> load(Class<T> type, String id) {
        return loadJson(id).map(json -> Json.MAPPER.convertValue(Json.parse(json), type));
    }

    /** The document under {@code id} as a JSON tree. */
    public Optional<JsonNode> load(String id) {
        return loadJson(id).map(Json::parse);
    }

    private Optional<String> loadJson(String id) {
        ensureUsable();
        checkId(id);
        Command.Op change = changes.get(Keys.normalize(id));
        if (change instanceof Command.PutDocument put) {
            return Optional.of(put.json());
        }
        if (change instanceof Command.DeleteDocument) {
            return Optional.empty();
        }
        return Optional.ofNullable(read(id).json());
    }

    /** The guard index the session knows for {@code id} (0: absent or not read), from a load or the last save. */
    public long guardIndex(String id) {
        ensureUsable();
        checkId(id);
        Known k = known.get(Keys.normalize(id));
        return k == null ? 0 : k.guardIndex();
    }

    /**
     * Records that {@code document} (anything Jackson writes as a JSON object) is to be stored under
     * {@code id}. A document the session loaded is replaced at the guard index the load saw; one it did
     * not load, or loaded as absent, is created, and the save fails if it exists by then (load it first
     * to overwrite it).
     *
     * @throws InvalidRequestException when the id or document breaks the protocol's rules
     */
    public void store(String id, Object document) {
        ensureUsable();
        checkId(id);
        Known k = known.get(Keys.normalize(id));
        Command.PutDocument put = new Command.PutDocument(id, documentJson(id, document), k == null ? 0 : k.guardIndex());
        validate(put);
        changes.put(Keys.normalize(id), put);
    }

    /**
     * Records that the document under {@code id} is to be deleted, at the guard index the session's load
     * saw. Deleting a document the session knows is absent does nothing; deleting one it stored but
     * never loaded cancels the store.
     *
     * @throws IllegalStateException when the session has neither loaded nor stored {@code id}: a delete is
     *                               conditioned on a guard index, and only a load provides one
     */
    public void delete(String id) {
        ensureUsable();
        checkId(id);
        String normalized = Keys.normalize(id);
        Known k = known.get(normalized);
        if (k != null && k.guardIndex() > 0) {
            changes.put(normalized, new Command.DeleteDocument(k.id(), k.guardIndex()));
        } else if (k != null || changes.get(normalized) instanceof Command.PutDocument) {
            changes.remove(normalized);
        } else {
            throw new IllegalStateException("load document '" + id + "' before deleting it: the delete is conditioned"
                    + " on the guard index that the load sees");
        }
    }

    /** The compare-exchange items of this unit of work, tracked and saved with the documents. */
    public SessionCompareExchange compareExchange() {
        ensureUsable();
        return compareExchange;
    }

    /** Whether the session has changes that {@link #saveChanges()} would send. */
    public boolean hasChanges() {
        ensureUsable();
        return !changes.isEmpty() || compareExchange.hasChanges();
    }

    // ---- saving

    /**
     * Sends every recorded change as one transaction. Returns the log index at which all of them were
     * applied, or 0 when there was nothing to save (then nothing is sent).
     *
     * @throws ConcurrencyException    when something the save is conditioned on has moved; nothing
     *                                 applied, and the session is unusable: re-run the unit of work
     * @throws InvalidRequestException when a change breaks the protocol's rules or limits (1024 operations,
     *                                 3 MiB per transaction); nothing applied, and the session is unusable
     * @throws UnknownOutcomeException when the save got no answer: it may have been applied. The session is
     *                                 unusable: read before you decide (or save with an idempotency key)
     */
    public long saveChanges() {
        return save(null, null);
    }

    /**
     * As {@link #saveChanges()}, carrying {@code idempotencyKey}: within {@code retention} the cluster
     * applies the save at most once, however often it is resent, from any connection, and a resend
     * returns the first outcome. After an {@link UnknownOutcomeException} call this again with the same
     * key to resend the very same transaction. A key names one save: use a fresh one (a UUID) for the next.
     */
    public long saveChanges(String idempotencyKey, Duration retention) {
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
        Objects.requireNonNull(retention, "retention");
        return save(idempotencyKey, retention);
    }

    private long save(String idempotencyKey, Duration retention) {
        if (managed) {
            throw new IllegalStateException("this session belongs to Retry.run, which saves it when the unit of work returns");
        }
        return send(idempotencyKey, retention);
    }

    /** Sends (or, after an unknown outcome, resends) the session's transaction. */
    long send(String idempotencyKey, Duration retention) {
        List<Command.Op> ops;
        if (state == State.OUTCOME_UNKNOWN) {
            if (idempotencyKey == null || !idempotencyKey.equals(inFlightKey)) {
                throw new IllegalStateException("the last save's outcome is unknown; only a resend with its idempotency key '"
                        + inFlightKey + "' is safe now", failure);
            }
            ops = inFlight;
        } else {
            ensureUsable();
            if (!hasChanges()) {
                return 0;
            }
            ops = transaction();
            inFlight = ops;
            inFlightKey = idempotencyKey;
        }
        for (Command.Op op : ops) {
            if (!(op instanceof Command.Check)) {
                sentKeys.add(op.key());
            }
        }
        TransactionResult result;
        try {
            result = cluster.transaction(ops, idempotencyKey, retention);
        } catch (UnknownOutcomeException e) {
            // Without a key a resend could apply twice (or be refused by its own first application).
            fail(idempotencyKey == null ? State.FAILED : State.OUTCOME_UNKNOWN, e);
            throw e;
        } catch (RuntimeException e) {
            fail(State.FAILED, e);
            throw e;
        }
        if (!result.successful()) {
            ConcurrencyException conflict = new ConcurrencyException(result.conflicts());
            fail(State.FAILED, conflict);
            throw conflict;
        }
        saved(result);
        return result.index();
    }

    /** The one transaction for the recorded changes, plus checks of what was only read when asked for. */
    private List<Command.Op> transaction() {
        List<Command.Op> ops = new ArrayList<>(changes.values());
        ops.addAll(compareExchange.changes());
        if (options.validateReads()) {
            known.forEach((normalized, k) -> {
                if (!changes.containsKey(normalized)) {
                    ops.add(new Command.Check(Document.guardKey(k.id()), k.guardIndex()));
                }
            });
            ops.addAll(compareExchange.readChecks());
        }
        return ops;
    }

    /**
     * Moves the session on to the state its save left: every written document and item at the index the
     * transaction gave it (one index in one group; each group's own across groups).
     */
    private void saved(TransactionResult result) {
        changes.forEach((normalized, op) -> known.put(normalized, op instanceof Command.PutDocument put
                ? new Known(existingSpelling(normalized, put.id()), result.indexOf(op.key()), put.json())
                : new Known(((Command.DeleteDocument) op).id(), 0, null)));
        changes.clear();
        compareExchange.saved(result::indexOf);
        state = State.OPEN;
        failure = null;
        inFlight = null;
        inFlightKey = null;
    }

    private String existingSpelling(String normalized, String id) {
        Known k = known.get(normalized);
        return k != null && k.guardIndex() > 0 ? k.id() : id;
    }

    private void fail(State state, RuntimeException cause) {
        this.state = state;
        this.failure = cause;
    }

    // ---- for Retry and SessionCompareExchange

    /** The transaction a save would send now, for {@link Retry}'s trail; empty when there is nothing to save. */
    List<Command.Op> pendingTransaction() {
        return hasChanges() ? transaction() : List.of();
    }

    /** The keys of every write this session has sent. */
    Set<String> sentKeys() {
        return Set.copyOf(sentKeys);
    }

    void ensureUsable() {
        if (state != State.OPEN) {
            throw new IllegalStateException("this session's save " + (state == State.FAILED ? "failed" : "has an unknown outcome")
                    + " (" + failure.getMessage() + "); the session is unusable: re-run the unit of work in a new session",
                    failure);
        }
    }

    static void validate(Command.Op op) {
        try {
            op.validate();
        } catch (InvalidCommandException e) {
            throw new InvalidRequestException(e.getMessage(), e);
        }
    }

    private static void checkId(String id) {
        try {
            new Query.GetDocument(id).validate();
        } catch (InvalidCommandException e) {
            throw new InvalidRequestException(e.getMessage(), e);
        }
    }

    private Known read(String id) {
        String normalized = Keys.normalize(id);
        Known k = known.get(normalized);
        if (k == null) {
            k = cluster.document(id).map(d -> new Known(d.id(), d.index(), d.json())).orElse(new Known(id, 0, null));
            known.put(normalized, k);
        }
        return k;
    }

    private static String documentJson(String id, Object document) {
        if (document == null) {
            throw new InvalidRequestException("document '" + id + "' must not be null", null);
        }
        JsonNode node = document instanceof JsonNode n ? n : Json.MAPPER.valueToTree(document);
        if (!node.isObject()) {
            throw new InvalidRequestException("document '" + id + "' must be a JSON object, not " + node.getNodeType(), null);
        }
        return Json.write(node);
    }
}
