package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.checker.LockChecker;
import io.ratchet.chaos.history.History;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetException;
import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.Lock;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.QueueEntry;
import io.ratchet.recipes.lock.QueueLease;
import io.ratchet.recipes.lock.Semaphores;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Processes queue for a permit of one semaphore of {@link #PERMITS} ({@link Semaphores}): each waits its
 * turn for a random 0.2..2 s, holds a moment and releases. {@link LockChecker#semaphore()} decides: never
 * more than {@link #PERMITS} holders at once (windows as for locks, each holder known by its token), no
 * token granted twice, and the permits item unchanged at the end.
 *
 * <p>An acquire is {@link Semaphores#acquire}, which ends by its wait plus the watch slack, so well within
 * its {@link #LEASE} counted from its invocation. A process whose acquire got no answer reads the queue to
 * learn whether it holds a permit (one of the first {@link #PERMITS} live entries), as {@link LockWorkload} says.
 */
public final class SemaphoreWorkload extends LockWorkload {
    static final String SEMAPHORE = "pool";
    static final int PERMITS = 2;
    static final Duration LEASE = Duration.ofSeconds(6);
    static final int MIN_WAIT_MS = 200;
    static final int MAX_WAIT_MS = 2000;
    private static final int HOLD_MS = 40;

    public SemaphoreWorkload() {
        super("s", LEASE);
    }

    @Override
    public String name() {
        return LockChecker.SEMAPHORE_WORKLOAD;
    }

    @Override
    public List<String> keyPrefixes() {
        return List.of(key(SEMAPHORE));
    }

    @Override
    String key(String name) {
        return Semaphores.PREFIX + name + "/";
    }

    @Override
    Lock<QueueLease> lock(RatchetClient client, String owner, String name) {
        return semaphores(client, owner).lock(name, PERMITS);
    }

    private static Semaphores semaphores(RatchetClient client, String owner) {
        return new Semaphores(client, LockOptions.defaults().withOwner(owner));
    }

    @Override
    Attempt acquire(ClientProcess process, String owner) {
        Lock<QueueLease> lock = lock(process.client(), owner, SEMAPHORE);
        int wait = MIN_WAIT_MS + process.random().nextInt(MAX_WAIT_MS - MIN_WAIT_MS + 1);
        ObjectNode input = acquireInput(owner).put("wait_ms", wait).put("permits", PERMITS);
        return recordAcquire(process, SEMAPHORE, input, () -> {
            try {
                return lock.acquire(LEASE, Duration.ofMillis(wait));
            } catch (InvalidRequestException e) {
                throw e;
            } catch (RatchetException e) {
                // It joined the queue first, so no error of it is certainly without effect.
                throw new IllegalStateException("acquire: " + e.getMessage(), e);
            }
        }, SemaphoreWorkload::output, lease -> lease.map(l -> new Held(SEMAPHORE, owner, l.fencingToken(), l.currentIndex())));
    }

    /** Reads the queue: the owner holds a permit when its entry is one of the first {@link #PERMITS} and had its turn. */
    @Override
    Outcome<Found> find(ClientProcess process, String name, String owner) {
        Semaphores semaphores = semaphores(process.client(), owner);
        return process.read("holder", key(name), History.object().put("owner", owner), () -> semaphores.queue(name),
                q -> holders(q, owner)).map(queue -> {
                    int at = -1;
                    for (int i = 0; i < queue.size(); i++) {
                        if (queue.get(i).owner().equals(owner)) {
                            at = i;
                        }
                    }
                    if (at < 0) {
                        return new Found(Optional.empty(), false);
                    }
                    QueueEntry e = queue.get(at);
                    return new Found(Optional.of(new Held(name, owner, e.fencingToken(), e.index())), at < PERMITS && e.holding());
                });
    }

    @Override
    void use(ClientProcess process, Held held) {
        sleep(1 + process.random().nextInt(HOLD_MS));
    }

    /** The final read: the permits item, which must still say {@link #PERMITS}. */
    @Override
    public void finalReads(ClientProcess reader) {
        finalRead(reader, key(SEMAPHORE) + "permits", "permits");
    }

    private static JsonNode output(Optional<QueueLease> lease) {
        ObjectNode o = History.object().put("granted", lease.isPresent());
        lease.ifPresent(l -> o.put("token", l.fencingToken()).put("queued", l.place()).put("entry", entry(l.key())));
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

    @Override
    public Checker checker() {
        return LockChecker.semaphore();
    }
}
