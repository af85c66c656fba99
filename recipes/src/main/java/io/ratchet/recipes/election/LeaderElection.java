package io.ratchet.recipes.election;

import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.common.Failures;
import io.ratchet.recipes.lock.FairLocks;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.Lock;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.QueueLease;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * A candidate in the election of one leader among processes, as Curator's {@code LeaderLatch} and etcd's
 * {@code Election}: candidates campaign on a name, and at most one leads at a time. Built on a
 * {@link FairLocks fair lock} of that name, so candidates are served in the order they joined, and on
 * nothing but its public calls: leading is holding the lock, the term is the grant's fencing token.
 *
 * <p>Guarantee: at any cluster time at most one candidate holds the leadership, and every term is greater
 * than every earlier one, so a resource that refuses a term lower than the highest it has seen is never
 * written by a deposed leader. {@link #isLeader()} is judged conservatively on this process's monotonic
 * clock: it is true only while the lease of the last grant or renewal certainly still runs (counted from
 * the moment that write was sent, to within the nodes' clock skew), so it never claims leadership longer
 * than the cluster grants it. A leader renews every third of its lease; if renewals fail (the cluster is
 * out of reach, the lease was lost) it stops being leader when the last lease it was sure of ends, tells
 * its listeners, and campaigns again.
 *
 * <p>What the caller owes: {@link #start()} to campaign, {@link #close()} (or {@link #resign()}) to stop;
 * check {@link #isLeader()} (or pass {@link #term()} to what the leader writes) before acting as leader,
 * since a process that pauses can lose leadership between the check and the act. Thread-safe; listeners
 * are called on a background thread, one event at a time, and must not block.
 */
public final class LeaderElection implements AutoCloseable {
    /** A campaign's acquire waits at most this long at a time before it joins again. */
    static final Duration CAMPAIGN_SLICE = Duration.ofSeconds(10);
    /** After a campaign's acquire failed (the cluster out of reach), before it tries again. */
    static final Duration RETRY_PAUSE = Duration.ofMillis(200);

    private final Lock<QueueLease> lock;
    private final FairLocks locks;
    private final Duration lease;
    private final List<LeadershipListener> listeners = new CopyOnWriteArrayList<>();
    /** The listeners' events, in the order the state changed: each runs after the one before. */
    private CompletableFuture<Void> events = CompletableFuture.completedFuture(null);

    /** Bumped by every start and resign: a step of an older campaign finds it changed and stops. */
    private long campaign;
    private boolean campaigning;
    /** The grant while leading, else null. */
    private QueueLease grant;
    /** While leading: until when (monotonic nanos) the lease certainly runs. */
    private long leadingUntil;
    /** Completes with the term of the next leadership; replaced once that leadership ends. */
    private CompletableFuture<Long> elected = new CompletableFuture<>();

    /** A candidate for leadership of {@code name}, holding it {@code lease} at a time, with a fresh owner id. */
    public LeaderElection(RatchetClient client, String name, Duration lease) {
        this(client, name, lease, LockOptions.defaults());
    }

    /**
     * @throws InvalidRequestException when the name makes an invalid key, or the lease is not above 0 and at
     *                                 most {@link LockOptions#maxLease()}
     */
    public LeaderElection(RatchetClient client, String name, Duration lease, LockOptions options) {
        this.locks = new FairLocks(Objects.requireNonNull(client, "client"), options);
        this.lock = locks.lock(name);
        if (lease == null || lease.toMillis() <= 0 || lease.compareTo(options.maxLease()) > 0) {
            throw new InvalidRequestException("a lease of 1 ms .. " + options.maxLease() + ", not " + lease, null);
        }
        this.lease = Duration.ofMillis(lease.toMillis());
    }

    public String name() {
        return lock.name();
    }

    /** This candidate's owner id: what {@link #leader()} names while it leads. */
    public String owner() {
        return lock.owner();
    }

    /** Starts campaigning (again, after a resign); does nothing while already campaigning. */
    public synchronized void start() {
        if (campaigning) {
            return;
        }
        campaigning = true;
        long c = ++campaign;
        later(Duration.ZERO, () -> campaign(c));
    }

    /** Whether this candidate leads now: it holds the leadership, and its lease certainly still runs. */
    public synchronized boolean isLeader() {
        return grant != null && now() - leadingUntil < 0;
    }

    /** The term of this candidate's leadership while {@link #isLeader()}, else 0. */
    public synchronized long term() {
        return isLeader() ? grant.fencingToken() : 0;
    }

    /** Completes with the term when this candidate next leads (at once with the term, while it leads). */
    public synchronized CompletableFuture<Long> leadershipAsync() {
        return elected.copy();
    }

    /** Waits up to {@code timeout} for this candidate to lead; true when it does. */
    public boolean await(Duration timeout) throws InterruptedException {
        try {
            leadershipAsync().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            return isLeader();
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException("the election of '" + name() + "' failed", e.getCause());
        }
    }

    /** Calls {@code listener} on every gain and loss of leadership from now on. */
    public void addListener(LeadershipListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * Who leads {@code name} now, as a linearizable listing shows it; empty while nobody does (or while the
     * next candidate has not yet taken its turn). A leader whose lease ran out may be shown until it is
     * swept, as {@link FairLocks#holderAsync} says.
     */
    public CompletableFuture<Optional<Leader>> leaderAsync() {
        return locks.holderAsync(name()).thenApply(holder -> holder.filter(h -> h.fencingToken() > 0)
                .map(h -> new Leader(h.name(), h.owner(), h.fencingToken())));
    }

    public Optional<Leader> leader() {
        return RatchetClient.await(leaderAsync());
    }

    /**
     * Stops campaigning; if leading, gives up the leadership at once (the lock is released, so the next
     * candidate need not wait for the lease to run out) and tells the listeners. {@link #start()} campaigns again.
     */
    public CompletableFuture<Void> resignAsync() {
        QueueLease held;
        synchronized (this) {
            campaigning = false;
            campaign++;
            held = grant;
        }
        if (held == null) {
            return CompletableFuture.completedFuture(null);
        }
        depose(held);
        return lock.releaseAsync(held).handle((done, error) -> null);
    }

    public void resign() {
        RatchetClient.await(resignAsync());
    }

    /** Resigns. */
    @Override
    public void close() {
        resign();
    }

    // ---- the campaign

    private void campaign(long c) {
        if (!current(c)) {
            return;
        }
        long sent = now();
        lock.acquireAsync(lease, CAMPAIGN_SLICE).whenComplete((got, error) -> {
            if (error != null || got.isEmpty()) {
                later(error != null ? RETRY_PAUSE : Duration.ZERO, () -> campaign(c));
            } else if (now() - sent < lease.toNanos() / 3) {
                take(c, got.get(), sent);
            } else {
                // The grant's lease runs from its turn write, somewhere in a long wait, and only the moment
                // the acquire was sent is known: a renewal now says from when it certainly runs.
                long again = now();
                lock.renewAsync(got.get()).whenComplete((renewed, lost) -> {
                    if (lost != null) {
                        lock.releaseAsync(got.get()).handle((done, e) -> null);
                        later(RETRY_PAUSE, () -> campaign(c));
                    } else {
                        take(c, renewed, again);
                    }
                });
            }
        });
    }

    /** Leads with {@code won}, or, when the campaign ended meanwhile, gives it back. */
    private void take(long c, QueueLease won, long sent) {
        if (!lead(c, won, sent)) {
            lock.releaseAsync(won).handle((done, e) -> null);
        }
    }

    /** Takes up leadership with {@code won}, sent at {@code sent}; false when the campaign has ended meanwhile. */
    private boolean lead(long c, QueueLease won, long sent) {
        CompletableFuture<Long> news;
        synchronized (this) {
            if (!current(c)) {
                return false;
            }
            grant = won;
            leadingUntil = sent + won.duration().toNanos();
            news = elected;
            tell(l -> l.isLeader(won.fencingToken()));
        }
        news.complete(won.fencingToken());
        keep(c, won);
        return true;
    }

    /**
     * Keeps leadership: renews a third of the lease after the last renewal was sent, and again at once
     * while renewals fail, until the lease it was sure of has ended; then the leadership is lost.
     */
    private void keep(long c, QueueLease held) {
        long dueIn;
        synchronized (this) {
            if (!current(c) || grant != held) {
                return;
            }
            long sentAt = leadingUntil - held.duration().toNanos();
            dueIn = Math.max(0, sentAt + held.duration().toNanos() / 3 - now());
        }
        // The watchdog: deposes at the end of the lease unless a renewal moved that end on.
        later(Duration.ofNanos(Math.max(0, leadingUntil() - now())), () -> expire(c, held));
        later(Duration.ofNanos(dueIn), () -> renew(c, held));
    }

    private void renew(long c, QueueLease held) {
        if (!leading(c, held)) {
            return;
        }
        long sent = now();
        lock.renewAsync(held).whenComplete((renewed, error) -> {
            if (error == null) {
                boolean ours;
                boolean kept = false;
                synchronized (this) {
                    ours = leading(c, held);
                    if (ours && now() - leadingUntil < 0) {
                        grant = renewed;
                        leadingUntil = sent + renewed.duration().toNanos();
                        kept = true;
                    }
                }
                if (kept) {
                    keep(c, renewed);
                } else if (ours) {
                    // Answered after the lease it renewed had ended by our clock: leadership was not certain
                    // meanwhile, so it is given up rather than resumed.
                    lose(c, held, renewed);
                } else {
                    lock.releaseAsync(renewed); // leadership already given up: give the renewal back
                }
            } else if (Failures.unwrap(error) instanceof LeaseLostException) {
                lose(c, held, held);
            } else {
                // No answer: the lease may still run. Try again soon, until the watchdog says it has ended.
                later(RETRY_PAUSE, () -> renew(c, held));
            }
        });
    }

    /** The watchdog: loses leadership if {@code held}'s lease has ended without a renewal. */
    private void expire(long c, QueueLease held) {
        boolean ended;
        synchronized (this) {
            ended = current(c) && grant == held && now() - leadingUntil >= 0;
        }
        if (ended) {
            lose(c, held, held);
        }
    }

    /** Leadership {@code held} is over: tell the listeners, give back {@code last} and campaign again. */
    private void lose(long c, QueueLease held, QueueLease last) {
        if (!leading(c, held)) {
            return;
        }
        depose(held);
        lock.releaseAsync(last).handle((done, error) -> null); // if it is still there, the next candidate need not wait
        later(Duration.ZERO, () -> campaign(c));
    }

    /** Ends the leadership of {@code held}, if it is the current one, and tells the listeners. */
    private void depose(QueueLease held) {
        synchronized (this) {
            if (grant != held) {
                return;
            }
            grant = null;
            elected = new CompletableFuture<>();
            tell(l -> l.notLeader(held.fencingToken()));
        }
    }

    /** Queues an event for the listeners behind the ones before it; called with the state locked. */
    private void tell(Consumer<LeadershipListener> event) {
        events = events.thenRunAsync(() -> listeners.forEach(event)).exceptionally(error -> null);
    }

    private static long now() {
        return System.nanoTime();
    }

    private synchronized boolean current(long c) {
        return campaigning && campaign == c;
    }

    private synchronized boolean leading(long c, QueueLease held) {
        return current(c) && grant == held;
    }

    private synchronized long leadingUntil() {
        return leadingUntil;
    }

    /**
     * Runs {@code step} after {@code delay} on the JDK's shared delay scheduler, not the client's timer:
     * the watchdog must depose a leader whose client was closed.
     */
    private static void later(Duration delay, Runnable step) {
        Executor after = CompletableFuture.delayedExecutor(delay.toNanos(), TimeUnit.NANOSECONDS);
        CompletableFuture.runAsync(step, after);
    }
}
