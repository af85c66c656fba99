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
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Client sessions (Raft dissertation §6.3): what makes a resent write apply at most once, whichever node
 * or connection it comes through. Each session remembers the results of the batches its client has not
 * yet seen answered; a resend of one gets those results back instead of being applied again.
 *
 * <p>Deterministic like the rest of the store: a session expires when {@code timeout} of cluster time
 * passes without a write in it, and when more than {@link #MAX_SESSIONS} are open the one idle longest
 * goes first. Every replica expires the same sessions at the same entry. Not thread-safe.
 */
final class ClientSessions {
    /** Open sessions at most; opening one more expires the one idle longest. */
    static final int MAX_SESSIONS = 65_536;
    /**
     * Results kept per session at most. A client has one batch in flight, so it needs one; more only
     * bounds what a client that never reports its answers can make a node hold.
     */
    static final int MAX_KEPT_RESULTS = 16;

    /** One session's state; mutable, owned by this class. */
    static final class Session {
        final long id;
        final long timeoutMillis;
        long lastActive;
        /** The highest sequence number applied in this session (0 before the first). */
        long highestSequence;
        /** Results by sequence number, for the batches whose answers the client may still ask for. */
        final TreeMap<Long, List<Result>> kept = new TreeMap<>();

        Session(long id, long timeoutMillis, long lastActive) {
            this.id = id;
            this.timeoutMillis = timeoutMillis;
            this.lastActive = lastActive;
        }

        long expiresAt() {
            return lastActive + timeoutMillis;
        }
    }

    private final Map<Long, Session> sessions = new HashMap<>();
    /** Sessions by expiry, then id: what expiry and eviction look at. */
    private final NavigableSet<CompareExchangeStore.Expiring> byExpiry = new TreeSet<>();

    /** Opens a session, or answers as before when it is open already (a resent open). */
    Result open(Command.OpenSession open, long clusterTime) {
        Session existing = sessions.get(open.id());
        if (existing != null) {
            return new Result.SessionOpened(existing.id, existing.timeoutMillis);
        }
        if (sessions.size() >= MAX_SESSIONS) {
            remove(sessions.get(idOf(byExpiry.first())));
        }
        Session s = new Session(open.id(), open.timeoutMillis(), clusterTime);
        sessions.put(s.id, s);
        byExpiry.add(key(s));
        return new Result.SessionOpened(s.id, s.timeoutMillis);
    }

    /**
     * Applies a tagged batch once: {@code apply} runs only for a sequence number the session has not
     * applied; a resend gets the kept results. A batch in a session that does not exist applies nothing.
     */
    List<Result> apply(Batch batch, long clusterTime, Supplier<List<Result>> apply) {
        Session s = sessions.get(batch.session());
        if (s == null) {
            return Collections.nCopies(batch.commandCount(), new Result.SessionExpired(batch.session()));
        }
        touch(s, clusterTime);
        List<Result> results;
        if (batch.sequence() <= s.highestSequence) {
            results = s.kept.get(batch.sequence());
            if (results == null) {
                // Applied before, and its answer was reported received (or it is older than what is kept):
                // nobody waits for it, and applying it again is what this class exists to prevent.
                return Collections.nCopies(batch.commandCount(), new Result.Rejected("session " + batch.session()
                        + ": sequence " + batch.sequence() + " was applied before and its answer delivered"));
            }
        } else {
            results = List.copyOf(apply.get());
            s.highestSequence = batch.sequence();
            s.kept.put(batch.sequence(), results);
        }
        s.kept.headMap(batch.firstUnanswered()).clear();
        while (s.kept.size() > MAX_KEPT_RESULTS) {
            s.kept.pollFirstEntry();
        }
        return results;
    }

    /** Drops the sessions whose timeout has passed at {@code clusterTime}. */
    void expire(long clusterTime) {
        for (Iterator<CompareExchangeStore.Expiring> it = byExpiry.iterator(); it.hasNext(); ) {
            CompareExchangeStore.Expiring e = it.next();
            if (e.at() > clusterTime) {
                return;
            }
            it.remove();
            sessions.remove(idOf(e));
        }
    }

    int size() {
        return sessions.size();
    }

    /** For snapshots: every open session, in no particular order. */
    Iterable<Session> all() {
        return Collections.unmodifiableCollection(sessions.values());
    }

    /** For snapshots: puts back a session as it was written. */
    void restore(Session s) {
        sessions.put(s.id, s);
        byExpiry.add(key(s));
    }

    private void touch(Session s, long clusterTime) {
        byExpiry.remove(key(s));
        s.lastActive = Math.max(s.lastActive, clusterTime);
        byExpiry.add(key(s));
    }

    private void remove(Session s) {
        byExpiry.remove(key(s));
        sessions.remove(s.id);
    }

    /** Ordered by expiry; ties by the id's hex text, the same on every replica. */
    private static CompareExchangeStore.Expiring key(Session s) {
        return new CompareExchangeStore.Expiring(s.expiresAt(), Long.toHexString(s.id));
    }

    private static long idOf(CompareExchangeStore.Expiring e) {
        return Long.parseUnsignedLong(e.id(), 16);
    }
}
