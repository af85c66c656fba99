package io.ratchet.statemachine;

import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Result;
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
 * goes first. Every replica expires the same sessions at the same entry. Not thread-safe.
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
        /** That message's results, for a resend of it; null before the first. */
        List<Result> lastResults;
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

    private final Map<Long, Session> sessions = new HashMap<>();
    private final NavigableSet<Expiry> byExpiry = new TreeSet<>();
    /** The open sessions' {@link Footprint}s, summed. */
    private long footprint;

    /** Opens a session, or answers as before when it is open already (a resent open). */
    Result open(Command.OpenSession open, long clusterTime) {
        Session s = sessions.get(open.id());
        if (s == null) {
            if (sessions.size() >= MAX_SESSIONS) {
                remove(sessions.get(byExpiry.first().id()));
            }
            s = new Session(open.id(), open.timeoutMillis(), clusterTime);
            restore(s);
        }
        return new Result.SessionOpened(s.id, s.timeoutMillis);
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
        s.lastActive = Math.max(s.lastActive, clusterTime);
        byExpiry.add(s.expiry());
        if (batch.sequence() == s.lastSequence) {
            return s.lastResults;
        }
        if (batch.sequence() < s.lastSequence) {
            // Its answer was delivered (the client sent a later one): nobody waits for it, and applying
            // it again is what this class exists to prevent.
            return Collections.nCopies(batch.commandCount(), new Result.Rejected("session " + batch.session()
                    + ": sequence " + batch.sequence() + " was applied before and its answer delivered"));
        }
        s.lastSequence = batch.sequence();
        s.lastResults = List.copyOf(apply.get());
        footprint -= s.footprint;
        s.footprint = Footprint.session(s.lastResults);
        footprint += s.footprint;
        return s.lastResults;
    }

    /** Drops the sessions whose timeout has passed at {@code clusterTime}. */
    void expire(long clusterTime) {
        for (Iterator<Expiry> it = byExpiry.iterator(); it.hasNext(); ) {
            Expiry e = it.next();
            if (e.at() > clusterTime) {
                return;
            }
            it.remove();
            footprint -= sessions.remove(e.id()).footprint;
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

    /** For snapshots: every open session, in no particular order. */
    Iterable<Session> all() {
        return Collections.unmodifiableCollection(sessions.values());
    }

    /** Puts in a session: a new one, or one read back from a snapshot. */
    void restore(Session s) {
        sessions.put(s.id, s);
        byExpiry.add(s.expiry());
        s.footprint = Footprint.session(s.lastResults);
        footprint += s.footprint;
    }

    private void remove(Session s) {
        byExpiry.remove(s.expiry());
        sessions.remove(s.id);
        footprint -= s.footprint;
    }
}
