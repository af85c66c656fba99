package io.ratchet.recipes.lock;

import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.PutOptions;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.WatchResult;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Limits;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
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
    /** The random part of an entry's key: 16 lower-case hex digits (64 bits). */
    static final int SUFFIX_LENGTH = 16;
    /** A waiter re-lists at least this often even without news from its watches. */
    static final Duration MAX_WAIT_SLICE = Locks.MAX_WAIT_SLICE;
    /** A listing of more than one page starts over when the queue moved between pages; this many times at most. */
    private static final int MAX_LIST_RESTARTS = 16;
    private static final int MAX_GIVE_BACK_TRIES = 3;
    private static final int MAX_KEY_COLLISIONS = 3;
    private static final long MAX_WAIT_SECONDS = 100L * 365 * 24 * 3600;

    private final RatchetClient client;
    private final LockOptions options;
    private final LongSupplier nanoClock;
    private final String prefix;
    private final String kind;
    /** Whether queues carry a {@code permits} item all holders must agree with (semaphores). */
    private final boolean configured;
    private final int pageSize;
    /**
     * A cluster time that has certainly been reached: the greatest stamp of this instance's own writes
     * with a time-to-live ({@code expiresAt - ttl} of the item each left). Cluster time never goes back.
     */
    private final AtomicLong clusterTime = new AtomicLong();

    LeaseQueue(RatchetClient client, LockOptions options, LongSupplier nanoClock, String prefix, String kind,
               boolean configured, int pageSize) {
        this.client = Objects.requireNonNull(client, "client");
        this.options = Objects.requireNonNull(options, "options");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.prefix = prefix;
        this.kind = kind;
        this.configured = configured;
        if (pageSize < 2 || pageSize > Limits.MAX_PAGE_SIZE) {
            throw new IllegalArgumentException("page size 2.." + Limits.MAX_PAGE_SIZE + ", not " + pageSize);
        }
        this.pageSize = pageSize;
    }

    LockOptions options() {
        return options;
    }

    // ---- keys

    /**
     * The prefix of queue {@code name}'s entries, {@code <prefix><name>/}.
     *
     * @throws InvalidRequestException when the name is empty or makes keys the protocol refuses
     */
    String queuePrefix(String name) {
        if (name == null || name.isEmpty()) {
            throw invalid("a " + kind + " name must not be empty");
        }
        String queue = prefix + name + "/";
        try {
            Keys.validateWritable(queue + "0".repeat(SUFFIX_LENGTH));
        } catch (InvalidCommandException e) {
            throw invalid(kind + " name '" + abbreviate(name) + "' does not make a valid key: " + e.getMessage());
        }
        return queue;
    }

    /** The item holding a semaphore's number of permits. */
    static String permitsKey(String queuePrefix) {
        return queuePrefix + "permits";
    }

    private static String newKey(String queuePrefix) {
        byte[] random = new byte[SUFFIX_LENGTH / 2];
        ThreadLocalRandom.current().nextBytes(random);
        return queuePrefix + HexFormat.of().formatHex(random);
    }

    /** What follows the queue's prefix in {@code item}'s key (compared as keys are), or null when it is not under it. */
    private static String rest(String queuePrefix, Item item) {
        String key = Keys.normalize(item.key());
        String queue = Keys.normalize(queuePrefix);
        return key.startsWith(queue) ? key.substring(queue.length()) : null;
    }

    /** Whether {@code key} names an entry of the queue {@code queuePrefix}. */
    static boolean isEntryKey(String queuePrefix, String key) {
        String k = Keys.normalize(key);
        String queue = Keys.normalize(queuePrefix);
        return k.startsWith(queue) && isSuffix(k.substring(queue.length()));
    }

    private static boolean isSuffix(String s) {
        if (s.length() != SUFFIX_LENGTH) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    // ---- what the queue looks like

    /**
     * A queue as one listing saw it.
     *
     * @param entries its entries by place (lowest first), present when listed, known-expired ones included
     * @param config  the {@code permits} item, or null
     */
    /** The queue's order: by place, then (for places shared by one log entry) by key. */
    static final Comparator<Item> QUEUE_ORDER = Comparator.comparingLong(Item::createdIndex)
            .thenComparing(e -> Keys.normalize(e.key()));

    /** Whether entry {@code e} is ahead of the entry at {@code place} with {@code key} in the queue's order. */
    private static boolean ahead(Item e, long place, String key) {
        return e.createdIndex() < place || e.createdIndex() == place && Keys.normalize(e.key()).compareTo(Keys.normalize(key)) < 0;
    }

    /**
     * The fencing token entry {@code e} holds: the {@code "token"} its renewals carry, or, right after its
     * turn write, that write's index; 0 while it waits.
     */
    static long tokenOf(Item e) {
        var value = e.valueNode();
        long token = value.path("token").asLong(0);
        if (token > 0) {
            return token;
        }
        return value.path("holding").asBoolean(false) ? e.index() : 0;
    }

    static LockHolder holderOf(String name, Item e) {
        return new LockHolder(name, LockHolder.ownerOf(e), tokenOf(e), e.index(), e.expiry());
    }

    static QueueEntry entryOf(String name, Item e) {
        return new QueueEntry(name, LockHolder.ownerOf(e), e.key(), e.createdIndex(), tokenOf(e), e.index(), e.expiry());
    }

    record View(List<Item> entries, Item config) {
        Item entry(String key) {
            String id = Keys.normalize(key);
            return entries.stream().filter(e -> Keys.normalize(e.key()).equals(id)).findFirst().orElse(null);
        }
    }

    CompletableFuture<View> view(String queuePrefix) {
        return listAll(queuePrefix, 0, new ArrayList<>(), null, 0).thenApply(items -> {
            List<Item> entries = new ArrayList<>();
            Item config = null;
            for (Item item : items) {
                String rest = rest(queuePrefix, item);
                if (rest == null) {
                    continue;
                }
                if (isSuffix(rest)) {
                    entries.add(item);
                } else if (configured && rest.equals("permits")) {
                    config = item;
                }
            }
            entries.sort(QUEUE_ORDER);
            return new View(List.copyOf(entries), config);
        });
    }

    /**
     * Every item under {@code queuePrefix}. A list is paged by offset, so between two pages an item deleted
     * before the boundary would shift an entry that was there all along past it unseen. Each page therefore
     * starts at the previous page's last item and must find it still there at the same offset: then the page
     * holds every key after it as of that read. If it moved, the listing starts over.
     */
    private CompletableFuture<List<Item>> listAll(String queuePrefix, int start, List<Item> seen, String lastKey,
                                                  int restarts) {
        return client.listAsync(queuePrefix, start, pageSize).thenCompose(page -> {
            List<Item> items = page;
            if (lastKey != null) {
                if (items.isEmpty() || !Keys.normalize(items.get(0).key()).equals(lastKey)) {
                    if (restarts >= MAX_LIST_RESTARTS) {
                        return CompletableFuture.failedFuture(new ClusterUnavailableException("the queue under '"
                                + queuePrefix + "' kept changing while it was listed (" + restarts + " tries)", null));
                    }
                    return listAll(queuePrefix, 0, new ArrayList<>(), null, restarts + 1);
                }
                items = items.subList(1, items.size());
            }
            seen.addAll(items);
            if (page.size() < pageSize) {
                return CompletableFuture.completedFuture(seen);
            }
            String last = Keys.normalize(page.get(page.size() - 1).key());
            return listAll(queuePrefix, start + pageSize - 1, seen, last, restarts);
        });
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
        return entry.expiredAt(clusterTime.get());
    }

    /** Notes the cluster time {@code item} was written at, if a write of ours with {@code ttlMillis} left it. */
    private void learn(Item item, long ttlMillis) {
        if (item != null && item.expiresAt() != 0) {
            long stamped = item.expiresAt() - ttlMillis;
            clusterTime.accumulateAndGet(stamped, Math::max);
        }
    }

    // ---- acquiring

    /** One acquire's state. Touched only by the steps of its own chain, one after another. */
    private final class Waiter {
        final String name;
        final String queue;
        final Duration lease;
        final long leaseMillis;
        final int permits;
        /** Join again at the back when the place is lost (acquire), rather than fail (await) or refuse (try). */
        final boolean requeue;
        /** Look once; never wait (tryAcquire). */
        final boolean once;
        /** When to stop waiting, and (+ slack) when to abandon a call still unanswered; monotonic nanos. */
        final long deadline;
        final long endsAt;
        Place place;
        /** The index the place had when it was lost. */
        long lostIndex;
        int enqueues;
        int pauses;
        boolean configChecked;
        volatile boolean abandoned;

        Waiter(String name, String queue, Duration lease, int permits, boolean requeue, boolean once, long deadline,
               long endsAt) {
            this.name = name;
            this.queue = queue;
            this.lease = lease;
            this.leaseMillis = lease.toMillis();
            this.permits = permits;
            this.requeue = requeue;
            this.once = once;
            this.deadline = deadline;
            this.endsAt = endsAt;
        }

        long leaseNanos() {
            return TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        }
    }

    /**
     * A place held in the queue.
     *
     * @param sentNanos when the write that set {@code expiresAt} was sent (monotonic): the entry lives on
     *                  cluster time until at least {@code sentNanos + lease}, to within clock skew
     */
    private record Place(String key, long place, long index, long expiresAt, long sentNanos) {
        Place moved(long index, long expiresAt) {
            return new Place(key, place, index, expiresAt, sentNanos);
        }
    }

    /** One look: joins the queue and takes the turn if fewer than {@code permits} live entries are ahead, else leaves. */
    CompletableFuture<Optional<QueueLease>> tryAcquire(String name, Duration lease, int permits) {
        return checked(() -> {
            String queue = queuePrefix(name);
            Duration granted = Duration.ofMillis(leaseMillis(lease));
            long now = nanoClock.getAsLong();
            return run(new Waiter(name, queue, granted, permits, false, true, now, Long.MAX_VALUE));
        });
    }

    /** Joins the queue and waits for the turn up to {@code wait}, joining again if the place is lost meanwhile. */
    CompletableFuture<Optional<QueueLease>> acquire(String name, Duration lease, Duration wait, int permits) {
        return checked(() -> {
            String queue = queuePrefix(name);
            Duration granted = Duration.ofMillis(leaseMillis(lease));
            long deadline = deadline(wait);
            return run(new Waiter(name, queue, granted, permits, true, false, deadline,
                    deadline + RatchetClient.WATCH_SLACK.toNanos()));
        });
    }

    /** Joins the queue and returns the place without waiting. */
    CompletableFuture<Ticket> enqueue(String name, Duration lease) {
        return checked(() -> {
            String queue = queuePrefix(name);
            Duration granted = Duration.ofMillis(leaseMillis(lease));
            Waiter w = new Waiter(name, queue, granted, 1, false, true, nanoClock.getAsLong(), Long.MAX_VALUE);
            return enqueueStep(w, 0).thenApply(placed -> {
                if (!placed) {
                    throw LeaseLostException.joinedTooLate(name, w.lostIndex, granted);
                }
                Place p = w.place;
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
            if (!isEntryKey(queue, ticket.key())) {
                throw invalid("ticket key '" + abbreviate(ticket.key()) + "' is no entry of " + kind + " '" + ticket.name() + "'");
            }
            requireIndex(ticket.name(), ticket.currentIndex());
            Duration lease = Duration.ofMillis(leaseMillis(ticket.duration()));
            long deadline = deadline(wait);
            Waiter w = new Waiter(ticket.name(), queue, lease, permits, false, false, deadline,
                    deadline + RatchetClient.WATCH_SLACK.toNanos());
            w.enqueues = 1;
            w.place = new Place(ticket.key(), ticket.place(), ticket.currentIndex(), ticket.expiresAt().toEpochMilli(),
                    ticket.sentNanos);
            return run(w);
        });
    }

    private long deadline(Duration wait) {
        if (wait == null || wait.isNegative()) {
            throw invalid("a wait must be 0 or more, not " + text(wait));
        }
        // The local monotonic clock bounds how long we wait; it never judges a lease. (Capped so that the
        // deadline arithmetic cannot overflow: a century is as good as forever here.)
        return nanoClock.getAsLong() + Math.min(wait.toSeconds(), MAX_WAIT_SECONDS) * 1_000_000_000L + wait.toNanosPart();
    }

    /** Runs a waiter to its end; on an error, gives back any place it still holds, then passes the error on. */
    private CompletableFuture<Optional<QueueLease>> run(Waiter w) {
        return loop(w).handle((lease, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(lease);
            }
            Throwable cause = unwrap(error);
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
            View v = seen.get();
            Place p = w.place;
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
    private CompletableFuture<Optional<QueueLease>> decide(Waiter w, View v) {
        if (w.abandoned) {
            return giveUp(w);
        }
        if (configured && !w.configChecked) {
            // The permits item vanished between the listing and its creation: look again.
            return w.once || past(w.deadline) ? giveUp(w) : loop(w);
        }
        Place p = w.place;
        List<Item> ahead = v.entries().stream().filter(e -> ahead(e, p.place(), p.key()) && !expired(e)).toList();
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
        return woken(watched, followRenewals, millis).thenCompose(ignored -> loop(w));
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
    private QueueLease lease(Waiter w, Place p) {
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
                head == null ? null : holderOf(w.name, head)));
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
        Place p = w.place;
        if (p == null) {
            return empty();
        }
        w.place = null;
        return untilEnd(w, giveBack(p.key(), p.index(), p.place())).thenApply(ignored -> Optional.empty());
    }

    /** Joins the queue with a fresh key; false when the answer came too late to be used (given back) or never. */
    private CompletableFuture<Boolean> enqueueStep(Waiter w, int collisions) {
        String key = newKey(w.queue);
        long sent = nanoClock.getAsLong();
        return within(w, () -> put(key, waiting(), 0, w.leaseMillis), late -> {
            if (late.successful()) {
                giveBack(key, late.index(), late.createdIndex());
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
            if (nanoClock.getAsLong() - sent >= w.leaseNanos()) {
                // Answered later than its lease: it may have run out already, and later entries may have
                // been served past it. Given back, as Locks gives back a late grant.
                w.lostIndex = r.index();
                return untilEnd(w, giveBack(key, r.index(), r.createdIndex())).thenApply(ignored -> false);
            }
            w.place = new Place(key, r.createdIndex(), r.index(), r.expiresAt(), sent);
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
        Place p = w.place;
        long sent = nanoClock.getAsLong();
        Map<String, Object> value = turn ? holding(options.owner(), 0) : waiting();
        return within(w, () -> put(p.key(), value, p.index(), w.leaseMillis), late -> {
            if (late.successful()) {
                giveBack(p.key(), late.index(), p.place());
            }
        }).thenCompose(answer -> {
            if (answer.isEmpty()) {
                return CompletableFuture.completedFuture(false);
            }
            CompareExchangeResult r = answer.get();
            if (r.successful()) {
                learn(r.item(), w.leaseMillis);
                if (nanoClock.getAsLong() - sent < w.leaseNanos()) {
                    w.place = new Place(p.key(), p.place(), r.index(), r.expiresAt(), sent);
                    return CompletableFuture.completedFuture(true);
                }
                w.lostIndex = p.index();
                w.place = null;
                return untilEnd(w, giveBack(p.key(), r.index(), p.place())).thenApply(ignored -> false);
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
            CompletableFuture<Void> back = ours ? giveBack(p.key(), now.index(), p.place()) : CompletableFuture.completedFuture(null);
            return untilEnd(w, back).thenApply(ignored -> false);
        });
    }

    /** The first waiter of a semaphore checks (or sets) the number of permits every holder must agree on. */
    private CompletableFuture<Void> checkConfig(Waiter w, Item config) {
        if (config != null) {
            return matches(w, config);
        }
        String key = permitsKey(w.queue);
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

    /**
     * Completes when any of {@code watched} changes in a way that may bring the turn nearer, or when
     * {@code millis} pass, or a watch fails (the listing that follows will tell). A change that leaves a
     * watched entry in place under the same place (a renewal) re-arms that watch alone when
     * {@code followRenewals}.
     */
    private CompletableFuture<Void> woken(List<Item> watched, boolean followRenewals, long millis) {
        CompletableFuture<Void> woken = new CompletableFuture<>();
        List<CompletableFuture<WatchResult>> armed = new CopyOnWriteArrayList<>();
        // Once one watch wakes the waiter, the others are of no use: cancelled, they are not armed again.
        woken.whenComplete((ignored, error) -> armed.forEach(f -> f.cancel(false)));
        long ends = nanoClock.getAsLong() + TimeUnit.MILLISECONDS.toNanos(millis);
        for (Item entry : watched) {
            watch(entry.key(), entry.index(), entry.createdIndex(), followRenewals, ends, woken, armed);
        }
        return woken;
    }

    private void watch(String key, long after, long place, boolean followRenewals, long ends, CompletableFuture<Void> woken,
                       List<CompletableFuture<WatchResult>> armed) {
        long left = TimeUnit.NANOSECONDS.toMillis(ends - nanoClock.getAsLong());
        if (woken.isDone()) {
            return;
        }
        if (left <= 0) {
            woken.complete(null);
            return;
        }
        CompletableFuture<WatchResult> watch = client.watchAsync(key, after,
                Duration.ofMillis(Math.min(left, RatchetClient.MAX_WATCH.toMillis())));
        armed.add(watch);
        if (woken.isDone()) {
            watch.cancel(false);
        }
        watch.whenComplete((answer, error) -> {
            if (woken.isDone()) {
                return;
            }
            if (error != null) {
                if (unwrap(error) instanceof InvalidRequestException bad) {
                    woken.completeExceptionally(bad);
                } else {
                    woken.complete(null);
                }
                return;
            }
            Item now = answer.item().orElse(null);
            if (followRenewals && answer.changed() && now != null && now.createdIndex() == place && !expired(now)) {
                watch(key, now.index(), place, true, ends, woken, armed);
                return;
            }
            woken.complete(null);
        });
    }

    // ---- renew, release

    CompletableFuture<QueueLease> renew(QueueLease lease, Duration duration) {
        return checked(() -> {
            requireLease(lease);
            Duration granted = Duration.ofMillis(leaseMillis(duration));
            long sent = nanoClock.getAsLong();
            Map<String, Object> value = lease.fencingToken() > 0 ? holding(lease.owner(), lease.fencingToken()) : waiting(lease.owner());
            return put(lease.key(), value, lease.currentIndex(), granted.toMillis()).thenCompose(r -> {
                if (!r.successful()) {
                    return lostLease(lease.name(), lease.currentIndex(), r.item());
                }
                learn(r.item(), granted.toMillis());
                if (nanoClock.getAsLong() - sent >= granted.toNanos()) {
                    return giveBack(lease.key(), r.index(), lease.place()).thenCompose(ignored -> CompletableFuture.failedFuture(
                            LeaseLostException.answeredTooLate(lease.name(), lease.currentIndex(), granted)));
                }
                return CompletableFuture.completedFuture(new QueueLease(lease.name(), lease.owner(), lease.key(),
                        r.createdIndex(), lease.fencingToken(), r.index(), Instant.ofEpochMilli(r.expiresAt()), granted));
            });
        });
    }

    CompletableFuture<Void> release(QueueLease lease) {
        return checked(() -> {
            requireLease(lease);
            return client.deleteAsync(lease.key(), lease.currentIndex()).thenCompose(r -> r.successful()
                    ? CompletableFuture.completedFuture(null)
                    : lostLease(lease.name(), lease.currentIndex(), r.item()).thenApply(ignored -> null));
        });
    }

    /** Extends {@code lease} by its own duration. */
    CompletableFuture<QueueLease> renew(QueueLease lease) {
        return checked(() -> {
            if (lease == null) {
                throw invalid("no lease given");
            }
            return renew(lease, lease.duration());
        });
    }

    /**
     * Renews the entry at {@code index} in {@code name}'s queue, for a holder that kept only the index (a
     * command line): lists the queue for its entry, then renews at that index, which is the atomic check.
     */
    CompletableFuture<QueueLease> renewAt(String name, long index, Duration duration) {
        return checked(() -> {
            queuePrefix(name);
            leaseMillis(duration);
            requireIndex(name, index);
            return leaseAt(name, index, duration).thenCompose(found -> renew(found, duration));
        });
    }

    /** Releases the entry at {@code index} in {@code name}'s queue, for a holder that kept only the index. */
    CompletableFuture<Void> releaseAt(String name, long index) {
        return checked(() -> {
            queuePrefix(name);
            requireIndex(name, index);
            return leaseAt(name, index, null).thenCompose(this::release);
        });
    }

    /** The lease of the entry at {@code index} in {@code name}'s queue, for a holder that kept only the index. */
    CompletableFuture<QueueLease> leaseAt(String name, long index, Duration duration) {
        return checked(() -> {
            String queue = queuePrefix(name);
            requireIndex(name, index);
            return view(queue).thenApply(v -> {
                Item entry = entryAt(name, v, index);
                if (entry == null) {
                    throw new LeaseLostException(name, index, head(name, v));
                }
                return new QueueLease(name, LockHolder.ownerOf(entry), entry.key(), entry.createdIndex(), tokenOf(entry),
                        entry.index(), Instant.ofEpochMilli(entry.expiresAt()), duration);
            });
        });
    }

    /**
     * The entry at {@code index}. One log entry can write several (group commit puts a holder's renewal
     * and another client's join in one entry), and an index alone cannot tell them apart: then the one
     * this client's owner wrote, and if that is not exactly one, a refusal rather than a guess, which could
     * release or renew another holder's entry.
     */
    private Item entryAt(String name, View v, long index) {
        List<Item> at = v.entries().stream().filter(e -> e.index() == index).toList();
        if (at.size() <= 1) {
            return at.isEmpty() ? null : at.get(0);
        }
        List<Item> mine = at.stream().filter(e -> options.owner().equals(LockHolder.ownerOf(e))).toList();
        if (mine.size() != 1) {
            throw new InvalidRequestException("index " + index + " names " + at.size() + " entries of " + name
                    + "'s queue (one log entry wrote them) and " + mine.size() + " of them are owner '" + options.owner()
                    + "''s: give the lease itself, or act as the owner that took it", null);
        }
        return mine.get(0);
    }

    /** Fails with the {@link LeaseLostException} a refused renew or release of {@code name} at {@code index} owes. */
    private <T> CompletableFuture<T> lostLease(String name, long index, Item entryNow) {
        if (entryNow != null) {
            return CompletableFuture.failedFuture(new LeaseLostException(name, index, holderOf(name, entryNow)));
        }
        // The entry is gone: name whoever heads the queue now, if a listing says.
        return view(queuePrefix(name)).handle((v, error) -> error == null ? head(name, v) : null)
                .thenCompose(head -> CompletableFuture.failedFuture(new LeaseLostException(name, index, head)));
    }

    private LockHolder head(String name, View v) {
        return v.entries().stream().filter(e -> !expired(e)).findFirst().map(e -> holderOf(name, e)).orElse(null);
    }

    // ---- calls and helpers

    private CompletableFuture<CompareExchangeResult> put(String key, Map<String, Object> value, long index, long ttlMillis) {
        return client.putAsync(key, value, index, PutOptions.none().ttl(Duration.ofMillis(ttlMillis)));
    }

    /** A waiting entry's value. */
    private Map<String, Object> waiting() {
        return waiting(options.owner());
    }

    private static Map<String, Object> waiting(String owner) {
        return Map.of("owner", owner);
    }

    /** A holding entry's value: at the turn write (token 0: the write's own index will be it), then with its token. */
    private static Map<String, Object> holding(String owner, long token) {
        Map<String, Object> value = new LinkedHashMap<>(); // fields in this order, for people reading the item
        value.put("owner", owner);
        value.put("holding", true);
        if (token > 0) {
            value.put("token", token);
        }
        return value;
    }

    /**
     * Deletes the entry {@code key} at {@code index} if it is still there; if it has moved on under the same
     * place (a renewal that was in flight), at its new index. Completes either way, never exceptionally.
     */
    CompletableFuture<Void> giveBack(String key, long index, long place) {
        return giveBack(key, index, place, MAX_GIVE_BACK_TRIES);
    }

    private CompletableFuture<Void> giveBack(String key, long index, long place, int tries) {
        return client.deleteAsync(key, index).handle((r, error) -> {
            if (error == null && !r.successful() && r.item() != null && r.item().createdIndex() == place && tries > 1) {
                return giveBack(key, r.item().index(), place, tries - 1);
            }
            return CompletableFuture.<Void>completedFuture(null);
        }).thenCompose(f -> f);
    }

    /**
     * {@code call}, answered by the waiter's end or abandoned: empty then (and the waiter marked abandoned).
     * A call cannot be taken back once sent; {@code lateAnswer} gets an answer that arrives after.
     */
    private <T> CompletableFuture<Optional<T>> within(Waiter w, Supplier<CompletableFuture<T>> call, Consumer<T> lateAnswer) {
        if (w.endsAt == Long.MAX_VALUE) {
            return call.get().thenApply(Optional::of);
        }
        long left = w.endsAt - nanoClock.getAsLong();
        if (left <= 0) {
            w.abandoned = true;
            return CompletableFuture.completedFuture(Optional.empty());
        }
        AtomicBoolean decided = new AtomicBoolean();
        CompletableFuture<Optional<T>> outcome = new CompletableFuture<>();
        call.get().whenComplete((r, error) -> {
            if (decided.compareAndSet(false, true)) {
                if (error != null) {
                    outcome.completeExceptionally(error);
                } else {
                    outcome.complete(Optional.of(r));
                }
            } else if (error == null && lateAnswer != null) {
                lateAnswer.accept(r);
            }
        });
        client.after(Duration.ofNanos(left)).whenComplete((done, closed) -> {
            if (decided.compareAndSet(false, true)) {
                w.abandoned = true;
                outcome.complete(Optional.empty());
            }
        });
        return outcome;
    }

    /** Waits for {@code step} at most until the waiter's end; it goes on unwatched after that. */
    private CompletableFuture<Void> untilEnd(Waiter w, CompletableFuture<Void> step) {
        if (w.endsAt == Long.MAX_VALUE) {
            return step;
        }
        long left = w.endsAt - nanoClock.getAsLong();
        if (left <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> either = new CompletableFuture<>();
        step.whenComplete((done, error) -> either.complete(null));
        client.after(Duration.ofNanos(left)).whenComplete((done, closed) -> either.complete(null));
        return either;
    }

    /** A short jittered pause before joining again, never past the deadline. */
    private CompletableFuture<Void> pause(Waiter w) {
        long remaining = Math.max(0, TimeUnit.NANOSECONDS.toMillis(w.deadline - nanoClock.getAsLong()));
        long millis = Math.min(remaining, Locks.BACKOFF.delay(++w.pauses, ThreadLocalRandom.current()).toMillis());
        return millis <= 0 ? CompletableFuture.completedFuture(null) : client.after(Duration.ofMillis(millis));
    }

    private boolean past(long deadline) {
        return nanoClock.getAsLong() - deadline >= 0;
    }

    private static CompletableFuture<Optional<QueueLease>> empty() {
        return CompletableFuture.completedFuture(Optional.empty());
    }

    /** A lease as the cluster grants it: in whole milliseconds, above 0 and at most the maximum. */
    long leaseMillis(Duration lease) {
        if (lease == null || lease.toMillis() <= 0) {
            throw invalid("a lease must be at least 1 ms, not " + text(lease));
        }
        if (lease.compareTo(options.maxLease()) > 0) {
            throw invalid("a lease of " + text(lease) + " is above the maximum of " + text(options.maxLease()));
        }
        return lease.toMillis();
    }

    private void requireLease(QueueLease lease) {
        if (lease == null) {
            throw invalid("no lease given");
        }
        String queue = queuePrefix(lease.name());
        requireIndex(lease.name(), lease.currentIndex());
        if (lease.key() == null || !isEntryKey(queue, lease.key())) {
            throw invalid("the lease on " + kind + " '" + abbreviate(lease.name()) + "' names no entry of its queue: "
                    + lease.key());
        }
        if (lease.owner() == null || lease.owner().isEmpty()) {
            throw invalid("the lease on " + kind + " '" + abbreviate(lease.name()) + "' names no owner");
        }
    }

    private void requireIndex(String name, long index) {
        if (index <= 0) {
            throw invalid("a held " + kind + "'s index is above 0; " + kind + " '" + abbreviate(name) + "' was given " + index);
        }
    }

    static <T> CompletableFuture<T> checked(Supplier<CompletableFuture<T>> call) {
        try {
            return call.get();
        } catch (InvalidRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    static InvalidRequestException invalid(String message) {
        return new InvalidRequestException(message, null);
    }

    static Throwable unwrap(Throwable t) {
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    static String text(Duration d) {
        if (d == null) {
            return "none";
        }
        if (d.getNano() == 0) {
            return d.getSeconds() + " s";
        }
        return d.toMillis() != 0 ? d.toMillis() + " ms" : d.toNanos() + " ns";
    }

    static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...(" + s.length() + " chars)";
    }
}
