package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.checker.LockChecker;
import io.ratchet.chaos.history.History;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetException;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.QueueEntry;
import io.ratchet.recipes.lock.QueueLease;
import io.ratchet.recipes.lock.Semaphores;
import io.ratchet.protocol.Item;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Processes queue for a permit of one semaphore of {@link #PERMITS} ({@link Semaphores}): each waits its
 * turn for a random 0.2..2 s, holds a moment and releases. {@link LockChecker#semaphore()} decides: never
 * more than {@link #PERMITS} holders at once (windows as for locks, each holder known by its token), no
 * token granted twice, and the permits item unchanged at the end.
 *
 * <p>An acquire is {@link Semaphores#acquire}, which ends by its wait plus the watch slack, so well within
 * its {@link #LEASE} counted from its invocation. A process whose acquire got no answer reads the queue to
 * learn whether it holds a permit (one of the first {@link #PERMITS} live entries): then it uses and
 * releases it if its lease may not have run out, else gives back whatever place it still has.
 */
public final class SemaphoreWorkload implements Workload {
    static final String SEMAPHORE = "pool";
    static final int PERMITS = 2;
    static final Duration LEASE = Duration.ofSeconds(6);
    static final int MIN_WAIT_MS = 200;
    static final int MAX_WAIT_MS = 2000;
    private static final int HOLD_MS = 40;

    private final AtomicLong owners = new AtomicLong();

    @Override
    public String name() {
        return LockChecker.SEMAPHORE_WORKLOAD;
    }

    @Override
    public List<String> keyPrefixes() {
        return List.of(queue());
    }

    @Override
    public Worker newWorker() {
        return new SemaphoreWorker();
    }

    /** A permit held (or a place in the queue): owner, token, current index. */
    private record Held(String owner, long token, long index) {
        static Held of(QueueEntry e) {
            return new Held(e.owner(), e.fencingToken(), e.index());
        }
    }

    private final class SemaphoreWorker implements Worker {
        private String undetermined;
        private long undeterminedSent;
        private Held unreleased;

        @Override
        public void step(ClientProcess process) {
            if (undetermined != null || unreleased != null) {
                settle(process);
                return;
            }
            String owner = "s" + owners.incrementAndGet();
            Semaphores semaphores = new Semaphores(process.client(), LockOptions.defaults().withOwner(owner));
            int wait = MIN_WAIT_MS + process.random().nextInt(MAX_WAIT_MS - MIN_WAIT_MS + 1);
            ObjectNode input = History.object().put("owner", owner).put("lease_ms", LEASE.toMillis()).put("wait_ms", wait)
                    .put("permits", PERMITS);
            long[] sent = new long[1];
            Outcome<Optional<QueueLease>> acquired = process.write("acquire", queue(), input, () -> {
                sent[0] = System.nanoTime();
                try {
                    return semaphores.acquire(SEMAPHORE, PERMITS, LEASE, Duration.ofMillis(wait));
                } catch (InvalidRequestException e) {
                    throw e;
                } catch (RatchetException e) {
                    // It joined the queue first, so no error of it is certainly without effect.
                    throw new IllegalStateException("acquire: " + e.getMessage(), e);
                }
            }, SemaphoreWorkload::output);
            if (acquired.unknown()) {
                undetermined = owner;
                undeterminedSent = sent[0];
                settle(process);
            } else if (acquired.ok() && acquired.value().isPresent()) {
                QueueLease lease = acquired.value().get();
                holdAndRelease(process, new Held(owner, lease.fencingToken(), lease.currentIndex()));
            }
        }

        @Override
        public void finish(ClientProcess process) {
            for (int attempt = 0; attempt < 3 && (undetermined != null || unreleased != null); attempt++) {
                settle(process);
            }
        }

        private void settle(ClientProcess process) {
            String owner = undetermined != null ? undetermined : unreleased.owner();
            Semaphores semaphores = new Semaphores(process.client(), LockOptions.defaults().withOwner(owner));
            Outcome<List<QueueEntry>> read = process.read("holder", queue(), History.object().put("owner", owner),
                    () -> semaphores.queue(SEMAPHORE), q -> holders(q, owner));
            if (!read.ok()) {
                return;
            }
            List<QueueEntry> queue = read.value();
            int at = -1;
            for (int i = 0; i < queue.size(); i++) {
                if (queue.get(i).owner().equals(owner)) {
                    at = i;
                }
            }
            Optional<Held> ours = at < 0 ? Optional.empty() : Optional.of(Held.of(queue.get(at)));
            if (undetermined != null) {
                undetermined = null;
                boolean leaseLeft = System.nanoTime() - undeterminedSent < LEASE.toNanos();
                if (at >= 0 && at < PERMITS && queue.get(at).holding() && leaseLeft) {
                    holdAndRelease(process, ours.get());
                } else {
                    ours.ifPresent(h -> release(process, h));
                }
            } else {
                unreleased = null;
                ours.ifPresent(h -> release(process, h));
            }
        }

        private void holdAndRelease(ClientProcess process, Held held) {
            sleep(1 + process.random().nextInt(HOLD_MS));
            release(process, held);
        }

        private void release(ClientProcess process, Held held) {
            Semaphores semaphores = new Semaphores(process.client(), LockOptions.defaults().withOwner(held.owner()));
            Outcome<Boolean> released = process.write("release", queue(),
                    History.object().put("owner", held.owner()).put("token", held.token()), () -> {
                        try {
                            semaphores.release(SEMAPHORE, held.index());
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

    private static String queue() {
        return Semaphores.PREFIX + SEMAPHORE + "/";
    }

    /** The final read: the permits item, which must still say {@link #PERMITS}. */
    @Override
    public void finalReads(ClientProcess reader) {
        String key = queue() + "permits";
        for (int attempt = 0; attempt < 10; attempt++) {
            Outcome<Optional<Item>> read = reader.read("read", key, History.object(), () -> reader.client().get(key), item -> {
                ObjectNode o = History.object().put("index", item.map(Item::index).orElse(0L));
                item.ifPresent(i -> o.put("permits", i.valueNode().path("permits").asInt()));
                return o;
            });
            if (read.ok()) {
                break;
            }
            Pause.briefly();
        }
    }

    private static JsonNode output(Optional<QueueLease> lease) {
        ObjectNode o = History.object().put("granted", lease.isPresent());
        lease.ifPresent(l -> o.put("token", l.fencingToken()).put("queued", l.place())
                .put("entry", FairLockWorkload.lastSegment(l.key())));
        return o;
    }

    /**
     * The holders as the queue shows them (its first {@link #PERMITS} entries), and {@code "holder"}: the
     * reading owner itself when it is one of them (the form the checker takes a recovered grant in).
     */
    private static JsonNode holders(List<QueueEntry> queue, String owner) {
        ObjectNode o = History.object().put("length", queue.size());
        ArrayNode holders = o.putArray("holders");
        for (QueueEntry h : queue.subList(0, Math.min(PERMITS, queue.size()))) {
            holders.addObject().put("owner", h.owner()).put("token", h.fencingToken());
            if (h.owner().equals(owner) && h.holding()) {
                o.put("holder", owner).put("token", h.fencingToken());
            }
        }
        return o;
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
        return LockChecker.semaphore();
    }
}
