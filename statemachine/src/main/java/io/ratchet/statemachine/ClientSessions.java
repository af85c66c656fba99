package io.ratchet.statemachine;

import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Result;
import io.ratchet.statemachine.kv.Cursor;
import io.ratchet.statemachine.kv.Overlay;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Client sessions (Raft dissertation §6.3): what makes a resent write apply at most once, whichever node
 * or connection it comes through. A client sends its next message only once the last is answered, so a
 * session keeps the results of its latest message alone: a resend of it gets them back instead of being
 * applied again, and a copy of an older one (its answer long delivered) is refused, never applied.
 *
 * <p>Deterministic like the rest of the store: a session expires when {@code timeout} of cluster time
 * passes without a write in it, and when more than {@link #MAX_SESSIONS} are open the one idle longest
 * goes first. Every replica expires the same sessions at the same entry.
 *
 * <p>Each session is one record in the store (its timeout, last activity, last sequence number and that
 * message's results). What deciding needs (all but the results) is also held here, at most
 * {@link #MAX_SESSIONS} small objects whatever the state's size, and read back from the records when the
 * store opens; the results are read from the store only for a resend. Not thread-safe.
 */
final class ClientSessions {
    /** Open sessions at most; opening one more expires the one idle longest. */
    static final int MAX_SESSIONS = 65_536;

    /** One session's state; mutable, owned by this class. */
    static final class Session {
        final long id;
        final long timeoutMillis;
        long lastActive;
        /** The sequence number of the latest message applied (0 before the first). */
        long lastSequence;
        /** What this session counts for ({@link Footprint#session}), kept so it is counted once per change. */
        long footprint;

        Session(long id, long timeoutMillis, long lastActive) {
            this.id = id;
            this.timeoutMillis = timeoutMillis;
            this.lastActive = lastActive;
        }

        Expiry expiry() {
            return new Expiry(lastActive + timeoutMillis, id);
        }
    }

    /** When a session lapses, then its id: the order expiry and eviction go in, the same on every replica. */
    record Expiry(long at, long id) implements Comparable<Expiry> {
        @Override
        public int compareTo(Expiry o) {
            int c = Long.compare(at, o.at);
            return c != 0 ? c : Long.compare(id, o.id);
        }
    }

    private final Overlay state;
    private final Map<Long, Session> sessions = new HashMap<>();
    private final NavigableSet<Expiry> byExpiry = new TreeSet<>();
    /** The open sessions' {@link Footprint}s, summed. */
    private long footprint;

    /** The sessions the store holds. */
    ClientSessions(Overlay state) {
        this.state = state;
        byte[] from = StateKeys.single(StateKeys.SESSION);
        try (Cursor c = state.scan(from, StateKeys.after(from))) {
            while (c.next()) {
                Stored stored = SnapshotCodec.parse(c.value(), ClientSessions::readStored);
                Session s = new Session(ByteArrays.getLong(c.key(), 1), stored.timeoutMillis, stored.lastActive);
                s.lastSequence = stored.lastSequence;
                s.footprint = Footprint.session(stored.lastResults);
                index(s);
            }
        }
    }

    /** A session's record as the store holds it. */
    private record Stored(long timeoutMillis, long lastActive, long lastSequence, List<Result> lastResults) {
    }

    private static Stored readStored(java.io.DataInputStream in) throws java.io.IOException {
        long timeout = in.readLong();
        long lastActive = in.readLong();
        long lastSequence = in.readLong();
        List<Result> results = lastSequence > 0 ? List.copyOf(SnapshotCodec.readResults(in)) : null;
        return new Stored(timeout, lastActive, lastSequence, results);
    }

    private void store(Session s, List<Result> lastResults) {
        state.put(key(s.id), SnapshotCodec.bytes(out -> {
            out.writeLong(s.timeoutMillis);
            out.writeLong(s.lastActive);
            out.writeLong(s.lastSequence);
            if (s.lastSequence > 0) {
                SnapshotCodec.writeResults(out, lastResults);
            }
        }));
    }

    private static byte[] key(long id) {
        return StateKeys.numbered(StateKeys.SESSION, id, null);
    }

    /** Opens a session, or answers as before when it is open already (a resent open). */
    Result open(Command.OpenSession open, long clusterTime) {
        Session s = sessions.get(open.id());
        if (s == null) {
            if (sessions.size() >= MAX_SESSIONS) {
                remove(sessions.get(byExpiry.first().id()));
            }
            s = new Session(open.id(), open.timeoutMillis(), clusterTime);
            restore(s, null);
        }
        return new Result.SessionOpened(s.id, s.timeoutMillis);
    }

    /**
     * Whether apply would apply {@code batch} now rather than answer it from the session: its session is open
     * and its sequence number is above the latest applied (a new message, not a resend or an old copy).
     */
    boolean isNew(Batch batch) {
        Session s = sessions.get(batch.session());
        return s != null && batch.sequence() > s.lastSequence;
    }

    /**
     * Applies a tagged batch once: {@code apply} runs only for a sequence number above the session's
     * latest; a resend of the latest gets its results. A batch in a session that does not exist applies
     * nothing.
     */
    List<Result> apply(Batch batch, long clusterTime, Supplier<List<Result>> apply) {
        Session s = sessions.get(batch.session());
        if (s == null) {
            return Collections.nCopies(batch.commandCount(), new Result.SessionExpired(batch.session()));
        }
        byExpiry.remove(s.expiry());
        long activeBefore = s.lastActive;
        s.lastActive = Math.max(s.lastActive, clusterTime);
        byExpiry.add(s.expiry());
        if (batch.sequence() == s.lastSequence) {
            List<Result> last = lastResults(s);
            if (s.lastActive != activeBefore) {
                store(s, last);
            }
            return last;
        }
        if (batch.sequence() < s.lastSequence) {
            if (s.lastActive != activeBefore) {
                store(s, lastResults(s));
            }
            // Its answer was delivered (the client sent a later one): nobody waits for it, and applying
            // it again is what this class exists to prevent.
            return Collections.nCopies(batch.commandCount(), new Result.Rejected("session " + batch.session()
                    + ": sequence " + batch.sequence() + " was applied before and its answer delivered"));
        }
        s.lastSequence = batch.sequence();
        List<Result> results = List.copyOf(apply.get());
        footprint -= s.footprint;
        s.footprint = Footprint.session(results);
        footprint += s.footprint;
        store(s, results);
        return results;
    }

    /** The results of {@code s}'s latest message, from its record (null before the first). */
    List<Result> lastResults(Session s) {
        byte[] v = state.get(key(s.id));
        if (v == null) {
            throw new IllegalStateException("session " + s.id + " is open but the store has no record of it");
        }
        return SnapshotCodec.parse(v, ClientSessions::readStored).lastResults();
    }

    /** Drops the sessions whose timeout has passed at {@code clusterTime}. */
    void expire(long clusterTime) {
        for (Iterator<Expiry> it = byExpiry.iterator(); it.hasNext(); ) {
            Expiry e = it.next();
            if (e.at() > clusterTime) {
                return;
            }
            it.remove();
            Session s = sessions.remove(e.id());
            footprint -= s.footprint;
            state.delete(key(s.id));
        }
    }

    int size() {
        return sessions.size();
    }

    /** Whether {@code batch} would be applied now: its session is open and its sequence is new (not a resend). */
    boolean wouldApply(Batch batch) {
        Session s = sessions.get(batch.session());
        return s != null && batch.sequence() > s.lastSequence;
    }

    long footprint() {
        return footprint;
    }

    /** For exports: every open session, in no particular order. */
    Iterable<Session> all() {
        return Collections.unmodifiableCollection(sessions.values());
    }

    /** Puts in a session: a new one, or one read back from an older snapshot, with its last results. */
    void restore(Session s, List<Result> lastResults) {
        s.footprint = Footprint.session(lastResults);
        index(s);
        store(s, lastResults);
    }

    private void index(Session s) {
        sessions.put(s.id, s);
        byExpiry.add(s.expiry());
        footprint += s.footprint;
    }

    private void remove(Session s) {
        byExpiry.remove(s.expiry());
        sessions.remove(s.id);
        footprint -= s.footprint;
        state.delete(key(s.id));
    }
}
