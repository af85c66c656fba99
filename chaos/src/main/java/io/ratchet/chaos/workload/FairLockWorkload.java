package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.checker.LockChecker;
import io.ratchet.chaos.history.History;
import io.ratchet.chaos.workload.FencedResource.Acceptance;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetException;
import io.ratchet.recipes.lock.FairLocks;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.QueueEntry;
import io.ratchet.recipes.lock.QueueLease;
import io.ratchet.recipes.lock.Ticket;
import io.ratchet.protocol.Item;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Processes queue for one fair lock ({@link FairLocks}): each joins the queue, waits its turn for a
 * random 0.2..2 s, and when it comes writes to the lock's fenced resource under its token, holds a moment
 * and releases. {@link LockChecker#fair()} decides: every check of the locks workload, and first come,
 * first served among waiters whose places were live.
 *
 * <p>An acquire is one recorded operation in two calls: {@link FairLocks#enqueue} (given
 * {@link #JOIN_TIMEOUT}; a join without an answer by then is an unknown outcome, and given back should it
 * land after) and {@link FairLocks#await}, which ends by its wait plus the watch slack. So an acquire ends
 * well within its {@link #LEASE}, counted from its invocation, which the checker's lease windows and its
 * late-grant check rely on. Its output says the place it queued at, granted or not, and whether it lost
 * that place ({@code "lost":true}); a waiter that gave up otherwise held it, live, until then. A process
 * whose acquire got no answer reads the queue to learn whether it holds the lock (then uses and releases
 * it, if its lease may not have run out), or gives back a place it still has.
 */
public final class FairLockWorkload implements Workload {
    /** One lock, so that its queue grows. */
    static final String LOCK = "fair-q";
    /** Longer than the longest acquire (join, wait and slack), short enough that an abandoned place lapses in a run. */
    static final Duration LEASE = Duration.ofSeconds(6);
    static final Duration JOIN_TIMEOUT = Duration.ofMillis(1500);
    static final int MIN_WAIT_MS = 200;
    static final int MAX_WAIT_MS = 2000;
    /** How long a holder keeps the lock after its writes, at most: long enough for a queue to form. */
    private static final int HOLD_MS = 40;

    private final AtomicLong owners = new AtomicLong();

    @Override
    public String name() {
        return LockChecker.FAIR_WORKLOAD;
    }

    @Override
    public List<String> keyPrefixes() {
        return List.of(FairLocks.PREFIX + LOCK + "/", FencedResource.PREFIX + LOCK);
    }

    @Override
    public Worker newWorker() {
        return new FairWorker();
    }

    /** What one acquire came to: the lease if granted, where it queued (place and key), whether it lost that place. */
    private record Acquired(Optional<QueueLease> lease, long place, String key, boolean lost) {
    }

    private final class FairWorker implements Worker {
        /** An owner whose acquire got no answer, and that no read has settled yet. */
        private String undetermined;
        private long undeterminedSent;
        /** A grant (owner, token, index) whose release got no answer. */
        private Held unreleased;

        @Override
        public void step(ClientProcess process) {
            if (undetermined != null || unreleased != null) {
                settle(process);
                return;
            }
            String owner = "f" + owners.incrementAndGet();
            FairLocks locks = new FairLocks(process.client(), LockOptions.defaults().withOwner(owner));
            int wait = MIN_WAIT_MS + process.random().nextInt(MAX_WAIT_MS - MIN_WAIT_MS + 1);
            ObjectNode input = History.object().put("owner", owner).put("lease_ms", LEASE.toMillis()).put("wait_ms", wait);
            long[] sent = new long[1];
            Outcome<Acquired> acquired = process.write("acquire", locks.queuePrefix(LOCK), input, () -> {
                sent[0] = System.nanoTime();
                return acquire(locks, Duration.ofMillis(wait));
            }, FairLockWorkload::output);
            if (acquired.unknown()) {
                undetermined = owner;
                undeterminedSent = sent[0];
                settle(process);
            } else if (acquired.ok() && acquired.value().lease().isPresent()) {
                QueueLease lease = acquired.value().lease().get();
                holdAndRelease(process, new Held(owner, lease.fencingToken(), lease.currentIndex()));
            }
        }

        @Override
        public void finish(ClientProcess process) {
            for (int attempt = 0; attempt < 3 && (undetermined != null || unreleased != null); attempt++) {
                settle(process);
            }
        }

        /** Reads the queue to learn what an unanswered acquire or release did, and finishes the job. */
        private void settle(ClientProcess process) {
            String owner = undetermined != null ? undetermined : unreleased.owner();
            FairLocks locks = new FairLocks(process.client(), LockOptions.defaults().withOwner(owner));
            Outcome<List<QueueEntry>> read = process.read("holder", locks.queuePrefix(LOCK),
                    History.object().put("owner", owner), () -> locks.queue(LOCK), FairLockWorkload::head);
            if (!read.ok()) {
                return; // try again next step
            }
            List<QueueEntry> queue = read.value();
            Optional<QueueEntry> ours = queue.stream().filter(h -> h.owner().equals(owner)).findFirst();
            // It holds the lock once it heads the queue and its turn write (its token) landed.
            boolean heads = ours.isPresent() && queue.get(0) == ours.get() && ours.get().holding();
            if (undetermined != null) {
                undetermined = null;
                boolean leaseLeft = System.nanoTime() - undeterminedSent < LEASE.toNanos();
                if (heads && leaseLeft) {
                    holdAndRelease(process, Held.of(ours.get()));
                } else {
                    // Waiting (nobody awaits it any more) or found only after its lease may have run out, as a
                    // late answer: given back unused.
                    ours.ifPresent(h -> release(process, Held.of(h)));
                }
            } else {
                unreleased = null;
                ours.ifPresent(h -> release(process, Held.of(h)));
            }
        }

        private void holdAndRelease(ClientProcess process, Held held) {
            int writes = 1 + process.random().nextInt(2);
            for (int i = 0; i < writes; i++) {
                process.write("write", FencedResource.PREFIX + LOCK,
                        History.object().put("owner", held.owner()).put("token", held.token()),
                        () -> FencedResource.write(process.client(), LOCK, held.token(), held.owner()),
                        FairLockWorkload::acceptance);
            }
            sleep(process.random().nextInt(HOLD_MS + 1));
            release(process, held);
        }

        private void release(ClientProcess process, Held held) {
            FairLocks locks = new FairLocks(process.client(), LockOptions.defaults().withOwner(held.owner()));
            Outcome<Boolean> released = process.write("release", locks.queuePrefix(LOCK),
                    History.object().put("owner", held.owner()).put("token", held.token()), () -> {
                        try {
                            locks.release(LOCK, held.index());
                            return true;
                        } catch (LeaseLostException e) {
                            return false;
                        }
                    }, done -> History.object().put("released", done));
            if (released.unknown()) {
                unreleased = held;
            }
        }
    }

    /** A place that holds (or held, or waits for) the lock: its owner, token (0 while waiting) and current index. */
    private record Held(String owner, long token, long index) {
        static Held of(QueueEntry e) {
            return new Held(e.owner(), e.fencingToken(), e.index());
        }
    }

    /**
     * Joins, then waits. Any error but a refusal of the input is an unknown outcome (a place may have been
     * taken), so it is passed on as one, never as {@code ClusterUnavailableException}, which the history
     * would record as certainly without effect.
     */
    private static Acquired acquire(FairLocks locks, Duration wait) {
        CompletableFuture<Ticket> joining = locks.enqueueAsync(LOCK, LEASE);
        Ticket ticket;
        try {
            ticket = joining.get(JOIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            joining.thenAccept(late -> locks.leaveAsync(late)); // should it land after all, give it back
            throw new IllegalStateException("joining the queue got no answer in " + JOIN_TIMEOUT.toMillis() + " ms");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof LeaseLostException) {
                return new Acquired(Optional.empty(), 0, null, true); // answered too late and given back
            }
            throw unknown(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
        try {
            return new Acquired(locks.await(ticket, wait), ticket.place(), ticket.key(), false);
        } catch (LeaseLostException e) {
            return new Acquired(Optional.empty(), ticket.place(), ticket.key(), true);
        } catch (RuntimeException e) {
            throw unknown(e);
        }
    }

    private static RuntimeException unknown(Throwable e) {
        if (e instanceof InvalidRequestException invalid) {
            return invalid;
        }
        return new IllegalStateException("after joining the queue: " + (e instanceof RatchetException ? e.getMessage() : e), e);
    }

    @Override
    public void finalReads(ClientProcess reader) {
        String key = FencedResource.PREFIX + LOCK;
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

    private static JsonNode output(Acquired a) {
        ObjectNode o = History.object().put("granted", a.lease().isPresent());
        if (a.place() > 0) {
            o.put("queued", a.place()).put("entry", lastSegment(a.key()));
        }
        a.lease().ifPresent(l -> o.put("token", l.fencingToken()));
        if (a.lost()) {
            o.put("lost", true);
        }
        return o;
    }

    /** The queue's head, if it holds the lock (its turn write landed), where it queued, and the queue's length. */
    private static JsonNode head(List<QueueEntry> queue) {
        ObjectNode o = History.object().put("length", queue.size());
        if (!queue.isEmpty() && queue.get(0).holding()) {
            QueueEntry h = queue.get(0);
            o.put("holder", h.owner()).put("token", h.fencingToken()).put("queued", h.place()).put("entry", lastSegment(h.key()));
        }
        return o;
    }

    static String lastSegment(String key) {
        return key.substring(key.lastIndexOf('/') + 1).toLowerCase(java.util.Locale.ROOT);
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
        return LockChecker.fair();
    }
}
