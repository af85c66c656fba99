package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.checker.RenewChecker;
import io.ratchet.chaos.history.History;
import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.Lock;
import io.ratchet.recipes.lock.LockHolder;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A live holder keeps its lock: each process takes a lock of its own ({@link Locks}, a 5 s lease unless
 * the run says otherwise, {@code --renew-lease}), holds
 * it for {@link #HOLD}, renewing it every third of its lease as a service keeping a leader's lock or a
 * long job's lock does, then releases it and takes it again. Nobody else wants these locks, so the only
 * way to lose one is a renewal that did not land within the lease: a stall of the cluster longer than two
 * thirds of it. {@link RenewChecker} counts every renewal (or release) that found the lock gone as an
 * anomaly, and reports the least lease any renewal still had when its answer came.
 *
 * <p>A renewal that got no answer may have moved the lock's index; the process then reads the lock
 * (a {@code "holder"} read) and renews at the index it finds, as a client that lost its connection must.
 */
public final class RenewWorkload implements Workload {
    /** Starts every lock name of this workload; the process' number follows. */
    static final String NAME_PREFIX = "renew-";
    /** How long a process holds its lock before it releases it and takes it again. */
    static final Duration HOLD = Duration.ofSeconds(15);

    private final AtomicLong workers = new AtomicLong();
    private final AtomicLong owners = new AtomicLong();
    private final Duration lease;

    /** @param lease its locks' lease ({@link io.ratchet.chaos.RunSettings} has checked it) */
    public RenewWorkload(Duration lease) {
        this.lease = lease;
    }

    @Override
    public String name() {
        return RenewChecker.WORKLOAD;
    }

    @Override
    public List<String> keyPrefixes() {
        return List.of(Locks.key(NAME_PREFIX));
    }

    @Override
    public Worker newWorker() {
        return new RenewWorker(NAME_PREFIX + workers.incrementAndGet());
    }

    /** Nothing to compare at the end: the checker judges the renewals themselves. */
    @Override
    public void finalReads(ClientProcess reader) {
    }

    @Override
    public Checker checker() {
        return new RenewChecker();
    }

    private final class RenewWorker implements Worker {
        private final String name;
        private final String key;
        private Lock<Lease> lock;
        /** The grant as last renewed; null while the process holds nothing. */
        private Lease held;
        /** When the acquire or renewal that gave {@link #held} its lease was sent ({@link System#nanoTime()}). */
        private long lastSent;
        private long releaseAt;
        /** A renewal got no answer: the lock is read before it is renewed again. */
        private boolean unsure;

        RenewWorker(String name) {
            this.name = name;
            this.key = Locks.key(name);
        }

        @Override
        public void step(ClientProcess process) {
            if (held == null) {
                acquire(process);
            } else if (unsure) {
                settle(process);
            } else if (System.nanoTime() - releaseAt >= 0) {
                release(process);
            } else {
                // Every third of the lease, so that two renewals may fail before it is lost.
                long due = lastSent + lease.toNanos() / 3 - System.nanoTime();
                if (due > 0) {
                    LockWorkload.sleep(TimeUnit.NANOSECONDS.toMillis(due));
                }
                renew(process);
            }
        }

        @Override
        public void finish(ClientProcess process) {
            for (int attempt = 0; attempt < 3 && held != null && unsure; attempt++) {
                settle(process);
            }
            if (held != null && !unsure) {
                release(process);
            }
        }

        private void acquire(ClientProcess process) {
            String owner = "r" + owners.incrementAndGet();
            Lock<Lease> candidate = new Locks(process.client(), LockOptions.defaults().withOwner(owner)).lock(name);
            long[] sent = new long[1];
            Outcome<Optional<Lease>> grant = process.write("acquire", key, input(owner), () -> {
                sent[0] = System.nanoTime();
                return candidate.tryAcquire(lease);
            }, lease -> {
                ObjectNode o = History.object().put("granted", lease.isPresent());
                lease.ifPresent(l -> o.put("token", l.fencingToken()).put("index", l.currentIndex()));
                return o;
            });
            // An acquire without an answer may have left a grant: it frees itself when its lease runs out.
            if (grant.ok() && grant.value().isPresent()) {
                lock = candidate;
                held = grant.value().get();
                lastSent = sent[0];
                releaseAt = sent[0] + HOLD.toNanos();
            }
        }

        private void renew(ClientProcess process) {
            long[] sent = new long[1];
            Outcome<Optional<Lease>> renewed = process.write("renew", key,
                    input(held.owner()).put("token", held.fencingToken()).put("index", held.currentIndex()), () -> {
                        sent[0] = System.nanoTime();
                        try {
                            return Optional.of(lock.renew(held));
                        } catch (LeaseLostException e) {
                            return Optional.empty();
                        }
                    }, lease -> lease.isPresent()
                            ? History.object().put("renewed", true).put("index", lease.get().currentIndex())
                            : History.object().put("renewed", false).put("lost", true));
            if (renewed.unknown()) {
                unsure = true;
            } else if (renewed.ok() && renewed.value().isPresent()) {
                held = renewed.value().get();
                lastSent = sent[0];
            } else if (renewed.ok()) {
                held = null; // lost: the checker says so; take it again
            }
        }

        /** Reads the lock after a renewal without an answer, and goes on at the index it finds. */
        private void settle(ClientProcess process) {
            String owner = held.owner();
            Outcome<Optional<LockHolder>> read = process.read("holder", key, History.object().put("owner", owner),
                    () -> lock.holders().stream().filter(h -> h.owner().equals(owner)).findFirst(),
                    ours -> ours.isPresent()
                            ? History.object().put("holds", true).put("index", ours.get().index())
                            : History.object().put("holds", false));
            if (!read.ok()) {
                return; // read again next step
            }
            unsure = false;
            Optional<LockHolder> ours = read.value();
            if (ours.isEmpty()) {
                held = null;
                return;
            }
            // The lease runs at least from the last renewal known to have landed; the unanswered one may have extended it.
            held = new Lease(held.name(), owner, held.fencingToken(), ours.get().index(), held.expiresAt(), held.duration());
        }

        private void release(ClientProcess process) {
            Lease grant = held;
            held = null;
            process.write("release", key, input(grant.owner()).put("token", grant.fencingToken()), () -> {
                try {
                    lock.release(grant);
                    return true;
                } catch (LeaseLostException e) {
                    return false;
                }
            }, done -> History.object().put("released", done));
            // A release without an answer frees the lock anyway when the lease runs out.
        }

        private ObjectNode input(String owner) {
            return History.object().put("owner", owner).put("lease_ms", lease.toMillis());
        }
    }
}
