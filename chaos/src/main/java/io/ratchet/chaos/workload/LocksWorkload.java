package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.checker.LockChecker;
import io.ratchet.chaos.history.History;
import io.ratchet.chaos.workload.FencedResource.Acceptance;
import io.ratchet.chaos.workload.LockService.Acquisition;
import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.protocol.Item;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Processes contend for two locks; a holder writes to the lock's fenced resource under its token, then
 * releases. {@link LockChecker} decides: tokens increase, holders never overlap, the resource never
 * takes a stale token.
 *
 * <p>A process that gets no answer to an acquire reads the lock to learn whether it holds it, and one
 * that gets no answer to a release reads it to learn whether to release again, as a client that lost its
 * connection must. The locks come from a {@link LockService}; switching to {@code new Locks(client)} is a
 * new implementation of that interface passed to the constructor.
 */
public final class LocksWorkload implements Workload {
    private static final List<String> LOCKS = List.of("a", "b");
    /** How long a holder keeps the lock after its writes, at most: long enough for rivals to find it taken. */
    private static final int HOLD_MS = 20;
    /**
     * One grant in {@link #LONG_HOLD_ONE_IN} is held longer, up to {@link #LONG_HOLD_MS} (under the 5 s lease):
     * a lease that ends early (a leader's clock stepped ahead) then lets a rival in while the holder still
     * holds, which the checker sees; with 20 ms holds alone such a window is too short to be hit.
     */
    private static final int LONG_HOLD_ONE_IN = 8;
    private static final int LONG_HOLD_MS = 2_500;

    private final Function<RatchetClient, LockService> connect;
    private final AtomicLong owners = new AtomicLong();
    /**
     * Attempts whose acquire got no answer and which a later read showed not holding. Such an acquire may
     * still land late and leave a lock that nobody knows it holds; a process that finds one reaps it
     * (a release at its token, which cannot touch a newer holder).
     */
    private final Set<String> abandoned = ConcurrentHashMap.newKeySet();

    /** Locks from Ratchet's lock API ({@link LeasedLocks}). */
    public LocksWorkload() {
        this(LeasedLocks::new);
    }

    public LocksWorkload(Function<RatchetClient, LockService> connect) {
        this.connect = connect;
    }

    @Override
    public String name() {
        return LockChecker.WORKLOAD;
    }

    @Override
    public List<String> keyPrefixes() {
        return LOCKS.stream().flatMap(name -> Stream.of(Locks.key(name), FencedResource.PREFIX + name)).toList();
    }


    @Override
    public Worker newWorker() {
        return new LockWorker();
    }

    private final class LockWorker implements Worker {
        /** An attempt whose acquire got no answer, and that no read has settled yet (token 0: unknown). */
        private LockGrant undetermined;
        /** When that acquire was sent ({@link System#nanoTime()}): its lease, if granted, runs from no earlier. */
        private long undeterminedSent;
        /** A grant whose release got no answer. */
        private LockGrant unreleased;

        @Override
        public void step(ClientProcess process) {
            LockService locks = connect.apply(process.client());
            if (undetermined != null || unreleased != null) {
                settle(process, locks);
                return;
            }
            String name = LOCKS.get(process.random().nextInt(LOCKS.size()));
            String owner = "o" + owners.incrementAndGet();
            ObjectNode input = History.object().put("owner", owner);
            if (locks.leaseMillis() > 0) {
                input.put("lease_ms", locks.leaseMillis());
            }
            long[] sent = new long[1];
            Outcome<Acquisition> acquired = process.write("acquire", locks.key(name), input, () -> {
                sent[0] = System.nanoTime();
                return locks.tryAcquire(name, owner);
            }, LocksWorkload::acquisition);
            if (acquired.unknown()) {
                undetermined = new LockGrant(name, owner, 0);
                undeterminedSent = sent[0];
                settle(process, locks);
            } else if (acquired.ok() && acquired.value().granted()) {
                holdAndRelease(process, locks, acquired.value().holder());
            } else if (acquired.ok()) {
                reap(process, locks, acquired.value().holder());
            }
        }

        @Override
        public void finish(ClientProcess process) {
            LockService locks = connect.apply(process.client());
            for (int attempt = 0; attempt < 3 && (undetermined != null || unreleased != null); attempt++) {
                settle(process, locks);
            }
        }

        /** Reads the lock to learn what an unanswered acquire or release did, and finishes the job. */
        private void settle(ClientProcess process, LockService locks) {
            LockGrant pending = undetermined != null ? undetermined : unreleased;
            Outcome<Optional<LockGrant>> read = process.read("holder", locks.key(pending.name()),
                    History.object().put("owner", pending.owner()), () -> locks.holder(pending.name()), LocksWorkload::holder);
            if (!read.ok()) {
                return; // try again next step
            }
            boolean ours = read.value().map(h -> h.owner().equals(pending.owner())).orElse(false);
            if (pending == undetermined) {
                undetermined = null;
                boolean leaseLeft = locks.leaseMillis() == 0
                        || System.nanoTime() - undeterminedSent < TimeUnit.MILLISECONDS.toNanos(locks.leaseMillis());
                if (ours && leaseLeft) {
                    holdAndRelease(process, locks, read.value().get());
                } else if (ours) {
                    // Found only after its lease may have run out, as Locks treats a late answer: give it back unused.
                    release(process, locks, read.value().get());
                } else {
                    abandoned.add(pending.owner());
                }
            } else {
                unreleased = null;
                if (ours) {
                    release(process, locks, read.value().get());
                }
            }
        }

        private void holdAndRelease(ClientProcess process, LockService locks, LockGrant grant) {
            int writes = 1 + process.random().nextInt(2);
            for (int i = 0; i < writes; i++) {
                process.write("write", FencedResource.PREFIX + grant.name(),
                        History.object().put("owner", grant.owner()).put("token", grant.token()),
                        () -> FencedResource.write(process.client(), grant.name(), grant.token(), grant.owner()),
                        LocksWorkload::acceptance);
            }
            boolean holdLong = process.random().nextInt(LONG_HOLD_ONE_IN) == 0;
            sleep(process.random().nextInt((holdLong ? LONG_HOLD_MS : HOLD_MS) + 1));
            release(process, locks, grant);
        }

        private void release(ClientProcess process, LockService locks, LockGrant grant) {
            Outcome<Boolean> released = process.write("release", locks.key(grant.name()),
                    History.object().put("owner", grant.owner()).put("token", grant.token()),
                    () -> locks.release(grant), done -> History.object().put("released", done));
            if (released.unknown()) {
                unreleased = grant;
            }
        }

        private void reap(ClientProcess process, LockService locks, LockGrant holder) {
            if (holder != null && abandoned.contains(holder.owner())) {
                Outcome<Boolean> reaped = process.write("release", locks.key(holder.name()),
                        History.object().put("owner", holder.owner()).put("token", holder.token()),
                        () -> locks.release(holder), done -> History.object().put("released", done));
                if (reaped.ok()) {
                    abandoned.remove(holder.owner());
                }
            }
        }
    }

    @Override
    public void finalReads(ClientProcess reader) {
        for (String name : LOCKS) {
            String key = FencedResource.PREFIX + name;
            for (int attempt = 0; attempt < 10; attempt++) {
                Outcome<Optional<Item>> read = reader.read("read", key, History.object(), () -> reader.client().get(key), item -> {
                    ObjectNode o = History.object().put("index", item.map(Item::index).orElse(0L));
                    item.ifPresent(i -> o.put("token", i.valueNode().path("token").asLong()));
                    return o;
                });
                if (read.ok()) {
                    break;
                }
                Pause.briefly();
            }
        }
    }

    private static JsonNode acquisition(Acquisition a) {
        ObjectNode o = History.object().put("granted", a.granted());
        if (a.holder() != null) {
            o.put("holder", a.holder().owner()).put("token", a.holder().token());
        }
        return o;
    }

    private static JsonNode holder(Optional<LockGrant> holder) {
        ObjectNode o = History.object();
        holder.ifPresent(h -> o.put("holder", h.owner()).put("token", h.token()));
        return o;
    }

    private static JsonNode acceptance(Acceptance a) {
        return History.object().put("accepted", a.accepted()).put("index", a.index()).put("highest", a.highest());
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public Checker checker() {
        return new LockChecker();
    }
}
