package io.ratchet.recipes.lock;

import io.ratchet.client.CompareExchangeResult;
import io.ratchet.common.Failures;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A first-come, first-served queue of leased entries, the common part of {@link FairLocks} (one holder
 * at a time) and {@link Semaphores} (up to N). Built only from {@link RatchetClient}'s public calls.
 *
 * <p><b>Entries.</b> Queue {@code NAME} under prefix {@code P} is every item
 * {@code P<NAME>/<16 lower-case hex digits>} (a random suffix): a waiter joins with a create-only put of
 * {@code {"owner": ...}} with a time-to-live, and the index that created its entry (its
 * {@code createdIndex}, which renewals keep) is its <em>place</em>. Writes that the leader's group commit
 * puts in one log entry share that entry's index, so two entries can have the same place: the queue's
 * order is by place, then by key (random, so a tie between joins that were simultaneous is broken by
 * lot, the same way for every reader). A listing comes in key order and is sorted so. An entry is
 * <em>live</em> while it has not expired at cluster time; an entry this
 * process knows to have expired (its expiry is at or before a cluster time one of this instance's own
 * writes was stamped with) counts as gone at once, any other leaves when the sweeper deletes it. Items
 * under the prefix whose last segment is not 16 hex digits (a nested name's entries, a semaphore's
 * {@code permits} item) are not entries.
 *
 * <p><b>Turns and tokens.</b> An entry has its turn when fewer than {@code permits} live entries are
 * ahead of it (a fair lock has one permit). A new entry's place is above every applied index, so the
 * entries ahead of a waiter can only leave: once it has its turn it keeps it while its own entry lives.
 * Hence at most {@code permits} entries have their turn at any cluster time. A waiter that gets its turn
 * renews its entry at once, writing {@code "holding": true} (the <em>turn write</em>), and the index of
 * that write is its fencing token; later renewals carry it as {@code "token"}. The place cannot be the
 * token, since places tie. With one permit each holder's turn write is applied after the previous
 * holder's entry left (deleted, or expired by a cluster time a write of this holder's already carried), so
 * tokens strictly increase from holder to holder; with several, tokens do not decrease in the order turns
 * are decided, and turns decided in one log entry share one. The turn write also gives the lease its
 * whole duration when the turn comes, and is what tells the waiter behind that this one now holds.
 *
 * <p><b>Waiting, without a herd.</b> A waiter lists the queue (a linearizable read) and, if it must wait,
 * watches from the index it listed: with {@code permits} live entries ahead (all of them have their turn)
 * each of them; with more, only its immediate predecessor. A watch answers when its key changed above that
 * index, at once if it already has, so a release, a sweep or a give-back between the listing and the watch
 * is never missed. So a release wakes one waiter, the first, which lists once. A renewal of a watched entry
 * (its turn write among them) re-arms that watch without listing, except that with several permits a
 * waiter watching its predecessor lists again when the predecessor renews: its turn write means it now
 * holds, and the waiter must watch the holders instead (one more listing, by one waiter).
 *
 * <p><b>Leases while waiting.</b> A waiter renews its entry (a put at its index with the lease) once a
 * third of the lease has passed since its last write was sent, timed on this process's monotonic clock;
 * its watches end by then. When a renewal (or the turn write) is refused (the entry ran out) or answered
 * later than the lease, the place is lost: an acquire joins again at the back, an {@code await} fails
 * with {@link LeaseLostException}.
 *
 * <p><b>Bounds.</b> A waiting acquire ends by its wait plus {@link RatchetClient#WATCH_SLACK}: a call still
 * unanswered then is abandoned, the entry is given back (a delete at its index, following the entry if an
 * abandoned renewal moved it), and a write answered after that is given back when its answer arrives.
 */
final class LeaseQueue {
    /** A waiter re-lists at least this often even without news from its watches. */
    static final Duration MAX_WAIT_SLICE = Locks.MAX_WAIT_SLICE;
    private static final int MAX_KEY_COLLISIONS = 3;

    private final RatchetClient client;
    private final LockOptions options;
    private final LongSupplier nanoClock;
    private final LeaseKeeper keeper;
    private final QueueListing listing;
    private final String kind;
    /** Whether queues carry a {@code permits} item all holders must agree with (semaphores). */
    private final boolean configured;
    private final SeenClusterTime seen = new SeenClusterTime();
    private final QueueWatch watch;
    private final QueueLeases leases;
    LeaseQueue(RatchetClient client, LockOptions options, LongSupplier nanoClock, String prefix, String kind,
               boolean configured, int pageSize) {
        this.keeper = new LeaseKeeper(client, options, nanoClock);
        this.client = client;
        this.options = options;
        this.nanoClock = nanoClock;
        this.listing = new QueueListing(client, prefix, kind, configured, pageSize);
        this.kind = kind;
        this.configured = configured;
        this.watch = new QueueWatch(client, nanoClock, seen);
        this.leases = new QueueLeases(keeper, listing, seen, kind);
    }

    LockOptions options() {
        return options;
    }

    RatchetClient client() {
        return client;
    }

    /** The {@code kind} of this queue's lock events: fairLock or semaphore. */
    String eventKind() {
        return configured ? kind : "fairLock";
    }

    String queuePrefix(String name) {
        return listing.queuePrefix(name);
    }

    CompletableFuture<QueueListing.View> view(String queuePrefix) {
        return listing.view(queuePrefix);
    }

    /** The entries of {@code name}'s queue by place, without the ones this instance knows to have expired. */
    CompletableFuture<List<Item>> liveEntries(String name) {
        return checked(() -> view(queuePrefix(name)).thenApply(v -> v.entries().stream().filter(e -> !expired(e)).toList()));
    }

    /** A semaphore's number of permits, as its {@code permits} item says; empty without one. */
    CompletableFuture<Optional<Integer>> permits(String name) {
        return checked(() -> view(queuePrefix(name)).thenApply(v -> Optional.ofNullable(v.config()).map(c -> permitsOf(c))));
    }

    private boolean expired(Item entry) {
        return seen.expired(entry);
    }

    private void learn(Item item, long ttlMillis) {
        seen.learn(item, ttlMillis);
    }

    /** Renewing and releasing this queue's leases. */
    QueueLeases leases() {
        return leases;
    }

    // ---- acquiring

    /** One look: joins the queue and takes the turn if fewer than {@code permits} live entries are ahead, else leaves. */
    CompletableFuture<Optional<QueueLease>> tryAcquire(String name, Duration lease, int permits) {
        return checked(() -> {
            String queue = queuePrefix(name);
            Duration granted = keeper.granted(lease);
            return LockEvents.acquire(client, eventKind(), name, System.nanoTime(),
                    run(new Waiter(name, queue, granted, permits, false, true, keeper.now(), Long.MAX_VALUE)));
        });
    }

    /** Joins the queue and waits for the turn up to {@code wait}, joining again if the place is lost meanwhile. */
    CompletableFuture<Optional<QueueLease>> acquire(String name, Duration lease, Duration wait, int permits) {
        return checked(() -> {
            String queue = queuePrefix(name);
            Duration granted = keeper.granted(lease);
            long deadline = keeper.deadline(wait);
            return LockEvents.acquire(client, eventKind(), name, System.nanoTime(), run(new Waiter(name, queue, granted,
                    permits, true, false, deadline, deadline + RatchetClient.WATCH_SLACK.toNanos())));
        });
    }

    /** Joins the queue and returns the place without waiting. */
    CompletableFuture<Ticket> enqueue(String name, Duration lease) {
        return checked(() -> {
            String queue = queuePrefix(name);
            Duration granted = keeper.granted(lease);
            Waiter w = new Waiter(name, queue, granted, 1, false, true, keeper.now(), Long.MAX_VALUE);
            return enqueueStep(w, 0).thenApply(placed -> {
                if (!placed) {
                    throw LeaseLostException.joinedTooLate(name, w.lostIndex, granted);
                }
                Waiter.Place p = w.place;
                return new Ticket(name, options.owner(), p.key(), p.place(), p.index(), Instant.ofEpochMilli(p.expiresAt()),
                        granted, p.sentNanos());
            });
        });
    }

    /** Waits for {@code ticket}'s turn up to {@code wait}; fails with {@link LeaseLostException} if its place is lost. */
    CompletableFuture<Optional<QueueLease>> await(Ticket ticket, Duration wait, int permits) {
        return checked(() -> {
            if (ticket == null) {
                throw invalid("no ticket given");
            }
            String queue = queuePrefix(ticket.name());
            if (!QueueListing.isEntryKey(queue, ticket.key())) {
                throw invalid("ticket key '" + abbreviate(ticket.key()) + "' is no entry of " + kind + " '" + ticket.name() + "'");
            }
            requireIndex(ticket.name(), ticket.currentIndex());
            Duration lease = keeper.granted(ticket.duration());
            long deadline = keeper.deadline(wait);
            Waiter w = new Waiter(ticket.name(), queue, lease, permits, false, false, deadline,
                    deadline + RatchetClient.WATCH_SLACK.toNanos());
            w.enqueues = 1;
            w.place = new Waiter.Place(ticket.key(), ticket.place(), ticket.currentIndex(), ticket.expiresAt().toEpochMilli(),
                    ticket.sentNanos);
            return run(w);
        });
    }

    /** Runs a waiter to its end; on an error, gives back any place it still holds, then passes the error on. */
    private CompletableFuture<Optional<QueueLease>> run(Waiter w) {
        return loop(w).handle((lease, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(lease);
            }
            Throwable cause = Failures.unwrap(error);
            CompletableFuture<Optional<QueueLease>> back = w.place == null ? CompletableFuture.completedFuture(null) : leave(w);
            return back.thenCompose(ignored -> CompletableFuture.<Optional<QueueLease>>failedFuture(cause));
        }).thenCompose(f -> f);
    }

    private CompletableFuture<Optional<QueueLease>> loop(Waiter w) {
        if (w.place == null) {
            if (w.enqueues > 0 && (w.once || past(w.deadline))) {
                return empty();
            }
            w.enqueues++;
            return enqueueStep(w, 0).thenCompose(placed -> {
                if (placed) {
                    return loop(w);
                }
                if (w.abandoned || w.once || !w.requeue) {
                    return empty();
                }
                return pause(w).thenCompose(ignored -> loop(w));
            });
        }
        if (renewalDue(w)) {
            return renewStep(w, false).thenCompose(held -> held ? loop(w) : lost(w, null));
        }
        return within(w, () -> view(w.queue), null).thenCompose(seen -> {
            if (seen.isEmpty()) {
                return giveUp(w);
            }
            QueueListing.View v = seen.get();
            Waiter.Place p = w.place;
            Item own = v.entry(p.key());
            if (own == null || own.createdIndex() != p.place()) {
                w.lostIndex = p.index();
                w.place = null;
                return lost(w, v.entries().stream().filter(e -> !expired(e)).findFirst().orElse(null));
            }
            if (own.index() != p.index()) {
                // Renewed by someone holding only the index (a command line, say): follow it.
                w.place = p.moved(own.index(), own.expiresAt());
            }
            CompletableFuture<Void> config = configured && !w.configChecked
                    ? checkConfig(w, v.config()) : CompletableFuture.completedFuture(null);
            return config.thenCompose(ignored -> decide(w, v));
        });
    }

    /** After a listing: take the turn, leave (no waiting left), or watch what can bring the turn nearer. */
    private CompletableFuture<Optional<QueueLease>> decide(Waiter w, QueueListing.View v) {
        if (w.abandoned) {
            return giveUp(w);
        }
        if (configured && !w.configChecked) {
            // The permits item vanished between the listing and its creation: look again.
            return w.once || past(w.deadline) ? giveUp(w) : loop(w);
        }
        Waiter.Place p = w.place;
        List<Item> ahead = v.entries().stream().filter(e -> QueueListing.ahead(e, p.place(), p.key()) && !expired(e)).toList();
        if (ahead.size() < w.permits) {
            return turn(w);
        }
        if (w.once || past(w.deadline)) {
            return giveUp(w);
        }
        // With exactly `permits` ahead, all of them hold a turn and any one leaving brings ours; with more,
        // only our predecessor's leaving (or, with several permits, its getting its turn) changes our lot.
        List<Item> watched = ahead.size() == w.permits ? ahead : List.of(ahead.get(ahead.size() - 1));
        boolean followRenewals = w.permits == 1 || ahead.size() == w.permits; // else its renewal may be its turn write
        long millis = watchMillis(w);
        if (millis <= 0) {
            return loop(w); // a renewal is due first
        }
        return watch.woken(watched, followRenewals, millis).thenCompose(ignored -> loop(w));
    }

    /**
     * The turn has come: the turn write (a renewal that says {@code "holding": true}) makes the fencing
     * token, gives the lease its whole duration from now, and tells the waiter behind. If it is refused or
     * answered too late, the place is lost after all.
     */
    private CompletableFuture<Optional<QueueLease>> turn(Waiter w) {
        return renewStep(w, true).thenCompose(held -> held
                ? CompletableFuture.completedFuture(Optional.of(lease(w, w.place)))
                : lost(w, null));
    }

    /** The lease of a place right after its turn write: the write's index is the token. */
    private QueueLease lease(Waiter w, Waiter.Place p) {
        return new QueueLease(w.name, options.owner(), p.key(), p.place(), p.index(), p.index(),
                Instant.ofEpochMilli(p.expiresAt()), w.lease);
    }

    /** The place is gone: join again, refuse, or fail, as the waiter's kind says. */
    private CompletableFuture<Optional<QueueLease>> lost(Waiter w, Item head) {
        if (w.abandoned) {
            return giveUp(w);
        }
        w.place = null;
        if (w.requeue) {
            return past(w.deadline) ? empty() : pause(w).thenCompose(ignored -> loop(w));
        }
        if (w.once) {
            return empty();
        }
        return CompletableFuture.failedFuture(LeaseLostException.placeLost(w.name, w.lostIndex,
                head == null ? null : QueueListing.holderOf(w.name, head)));
    }

    /**
     * The wait is over without a turn: gives back the place and answers empty. An {@code await} answers so
     * only if its place was certainly still held (its last write was answered in time, less than a lease
     * ago): a caller may rely on having stood in the queue at its place until now. Otherwise (a renewal was
     * still unanswered when the waiter's end came) it fails with {@link LeaseLostException}.
     */
    private CompletableFuture<Optional<QueueLease>> giveUp(Waiter w) {
        boolean held = w.place != null && nanoClock.getAsLong() - w.place.sentNanos() < w.leaseNanos();
        long index = w.place != null ? w.place.index() : w.lostIndex;
        CompletableFuture<Optional<QueueLease>> left = leave(w);
        if (w.requeue || w.once || held) {
            return left;
        }
        return left.thenCompose(ignored -> CompletableFuture.failedFuture(LeaseLostException.placeLost(w.name, index, null)));
    }

    /** Gives back the place, if any (waiting at most until the waiter's end), and answers empty. */
    private CompletableFuture<Optional<QueueLease>> leave(Waiter w) {
        Waiter.Place p = w.place;
        if (p == null) {
            return empty();
        }
        w.place = null;
        return untilEnd(w, keeper.giveBack(p.key(), p.index(), p.place())).thenApply(ignored -> Optional.empty());
    }

    /** Joins the queue with a fresh key; false when the answer came too late to be used (given back) or never. */
    private CompletableFuture<Boolean> enqueueStep(Waiter w, int collisions) {
        String key = QueueListing.newKey(w.queue);
        long sent = nanoClock.getAsLong();
        return within(w, () -> put(key, waiting(), 0, w.lease), late -> {
            if (late.successful()) {
                keeper.giveBack(key, late.index(), late.createdIndex());
            }
        }).thenCompose(answer -> {
            if (answer.isEmpty()) {
                return CompletableFuture.completedFuture(false);
            }
            CompareExchangeResult r = answer.get();
            if (!r.successful()) {
                if (collisions + 1 >= MAX_KEY_COLLISIONS) {
                    throw new IllegalStateException("no free entry key in the queue of " + kind + " '" + w.name
                            + "' after " + (collisions + 1) + " random ones");
                }
                return enqueueStep(w, collisions + 1);
            }
            learn(r.item(), w.leaseMillis);
            if (!keeper.inTime(sent, w.lease)) {
                // Answered later than its lease: it may have run out already, and later entries may have
                // been served past it. Given back, as Locks gives back a late grant.
                w.lostIndex = r.index();
                return untilEnd(w, keeper.giveBack(key, r.index(), r.createdIndex())).thenApply(ignored -> false);
            }
            w.place = new Waiter.Place(key, r.createdIndex(), r.index(), r.expiresAt(), sent);
            return CompletableFuture.completedFuture(true);
        });
    }

    private boolean renewalDue(Waiter w) {
        return nanoClock.getAsLong() - w.place.sentNanos() >= w.leaseNanos() / 3;
    }

    /**
     * Renews the waiter's entry at its index; with {@code turn}, as its turn write. True when it holds its
     * place (renewed in time, or, while waiting, moved by someone else and followed); false when the place is
     * lost (given back if still there) or the call was abandoned (then the place is still set, for
     * {@link #leave}).
     */
    private CompletableFuture<Boolean> renewStep(Waiter w, boolean turn) {
        Waiter.Place p = w.place;
        long sent = nanoClock.getAsLong();
        Map<String, Object> value = turn ? QueueLeases.holding(options.owner(), 0) : waiting();
        return within(w, () -> put(p.key(), value, p.index(), w.lease), late -> {
            if (late.successful()) {
                keeper.giveBack(p.key(), late.index(), p.place());
            }
        }).thenCompose(answer -> {
            if (answer.isEmpty()) {
                return CompletableFuture.completedFuture(false);
            }
            CompareExchangeResult r = answer.get();
            if (r.successful()) {
                learn(r.item(), w.leaseMillis);
                if (keeper.inTime(sent, w.lease)) {
                    w.place = new Waiter.Place(p.key(), p.place(), r.index(), r.expiresAt(), sent);
                    return CompletableFuture.completedFuture(true);
                }
                w.lostIndex = p.index();
                w.place = null;
                return untilEnd(w, keeper.giveBack(p.key(), r.index(), p.place())).thenApply(ignored -> false);
            }
            Item now = r.item();
            boolean ours = now != null && now.createdIndex() == p.place();
            if (ours && now.index() != p.index() && !expired(now) && !turn) {
                w.place = p.moved(now.index(), now.expiresAt());
                return CompletableFuture.completedFuture(true);
            }
            w.lostIndex = p.index();
            w.place = null;
            // Refused at its own index: it ran out. Removed now, so that nobody waits for the sweep.
            CompletableFuture<Void> back = ours ? keeper.giveBack(p.key(), now.index(), p.place()) : CompletableFuture.completedFuture(null);
            return untilEnd(w, back).thenApply(ignored -> false);
        });
    }

    /** The first waiter of a semaphore checks (or sets) the number of permits every holder must agree on. */
    private CompletableFuture<Void> checkConfig(Waiter w, Item config) {
        if (config != null) {
            return matches(w, config);
        }
        String key = QueueListing.permitsKey(w.queue);
        return within(w, () -> client.putAsync(key, Map.of("permits", w.permits), 0), null).thenCompose(answer -> {
            if (answer.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            CompareExchangeResult r = answer.get();
            if (r.successful() || r.item() == null) {
                w.configChecked = r.successful();
                return CompletableFuture.completedFuture(null);
            }
            return matches(w, r.item());
        });
    }

    private CompletableFuture<Void> matches(Waiter w, Item config) {
        int permits;
        try {
            permits = permitsOf(config);
        } catch (InvalidRequestException e) {
            return leave(w).thenCompose(ignored -> CompletableFuture.failedFuture(e));
        }
        if (permits == w.permits) {
            w.configChecked = true;
            return CompletableFuture.completedFuture(null);
        }
        InvalidRequestException mismatch = invalid(kind + " '" + abbreviate(w.name) + "' has " + permits + " permits ("
                + config.key() + " at index " + config.index() + "), not " + w.permits
                + ": every holder must ask for the same number; nothing is held");
        return leave(w).thenCompose(ignored -> CompletableFuture.failedFuture(mismatch));
    }

    static int permitsOf(Item config) {
        var node = config.valueNode().get("permits");
        if (node == null || !node.canConvertToInt() || node.asInt() < 1) {
            throw invalid("item " + config.key() + " holds no number of permits: " + config.value());
        }
        return node.asInt();
    }

    /** How long to watch: until the wait ends, a renewal is due, or a slice passes; 0 when a renewal is due now. */
    private long watchMillis(Waiter w) {
        long now = nanoClock.getAsLong();
        long nanos = Math.min(w.deadline - now, w.place.sentNanos() + w.leaseNanos() / 3 - now);
        nanos = Math.min(nanos, MAX_WAIT_SLICE.toNanos());
        return nanos <= 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos));
    }

    // ---- calls and helpers

    private CompletableFuture<CompareExchangeResult> put(String key, Map<String, Object> value, long index, Duration lease) {
        return keeper.put(key, value, index, lease);
    }

    /** A waiting entry's value. */
    private Map<String, Object> waiting() {
        return QueueLeases.waiting(options.owner());
    }

    CompletableFuture<Void> giveBack(String key, long index, long place) {
        return keeper.giveBack(key, index, place);
    }

    /**
     * {@code call}, answered by the waiter's end or abandoned: empty then (and the waiter marked abandoned).
     * A call cannot be taken back once sent; {@code lateAnswer} gets an answer that arrives after.
     */
    private <T> CompletableFuture<Optional<T>> within(Waiter w, Supplier<CompletableFuture<T>> call, Consumer<T> lateAnswer) {
        return keeper.within(w.endsAt, call, lateAnswer).thenApply(answer -> {
            if (answer.isEmpty()) {
                w.abandoned = true;
            }
            return answer;
        });
    }

    /** Waits for {@code step} at most until the waiter's end; it goes on unwatched after that. */
    private CompletableFuture<Void> untilEnd(Waiter w, CompletableFuture<Void> step) {
        return keeper.untilEnd(w.endsAt, step);
    }

    /** A short jittered pause before joining again, never past the deadline. */
    private CompletableFuture<Void> pause(Waiter w) {
        return keeper.pause(++w.pauses, w.deadline);
    }

    private boolean past(long deadline) {
        return keeper.past(deadline);
    }

    private static CompletableFuture<Optional<QueueLease>> empty() {
        return CompletableFuture.completedFuture(Optional.empty());
    }

    private void requireIndex(String name, long index) {
        LeaseKeeper.requireIndex(kind, name, index);
    }

    static <T> CompletableFuture<T> checked(Supplier<CompletableFuture<T>> call) {
        return LeaseKeeper.checked(call);
    }

    static InvalidRequestException invalid(String message) {
        return LeaseKeeper.invalid(message);
    }

    private static String abbreviate(String s) {
        return LeaseKeeper.abbreviate(s);
    }
}
