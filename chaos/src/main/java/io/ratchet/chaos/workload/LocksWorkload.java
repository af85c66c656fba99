package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.checker.LockChecker;
import io.ratchet.chaos.history.History;
import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.Lease;
import io.ratchet.recipes.lock.Lock;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Processes contend for two locks of Ratchet's lock API ({@link Locks}: leased grants judged on cluster
 * time, the acquiring index the fencing token); a holder writes to the lock's fenced resource under its
 * token, then releases. {@link LockChecker} decides: tokens increase, holders never overlap, the resource
 * never takes a stale token.
 *
 * <p>An acquire is one {@link Lock#tryAcquire}. A holder never renews, so a grant that outlives its lease
 * (a paused holder) is what the checker's lease windows and the fenced resource are there to judge; and an
 * acquire that lands after its process gave up on it leaves a grant that frees itself when its lease runs
 * out. Unanswered acquires and releases are settled by a read of the lock, as {@link LockWorkload} says.
 */
public final class LocksWorkload extends LockWorkload {
    private static final List<String> LOCKS = List.of("a", "b");
    /** Far longer than a hold (milliseconds), short enough that an abandoned grant frees itself in a run. */
    static final Duration LEASE = Duration.ofSeconds(5);
    /** How long a holder keeps the lock after its writes, at most: long enough for rivals to find it taken. */
    private static final int HOLD_MS = 20;
    /**
     * One grant in {@link #LONG_HOLD_ONE_IN} is held longer, up to {@link #LONG_HOLD_MS} (under the 5 s lease):
     * a lease that ends early (a leader's clock stepped ahead) then lets a rival in while the holder still
     * holds, which the checker sees; with 20 ms holds alone such a window is too short to be hit.
     */
    private static final int LONG_HOLD_ONE_IN = 8;
    private static final int LONG_HOLD_MS = 2_500;

    public LocksWorkload() {
        super("o", LEASE);
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
    String key(String name) {
        return Locks.key(name);
    }

    @Override
    Lock<Lease> lock(RatchetClient client, String owner, String name) {
        return new Locks(client, LockOptions.defaults().withOwner(owner)).lock(name);
    }

    @Override
    Attempt acquire(ClientProcess process, String owner) {
        String name = LOCKS.get(process.random().nextInt(LOCKS.size()));
        Lock<Lease> lock = lock(process.client(), owner, name);
        return recordAcquire(process, name, acquireInput(owner), () -> lock.tryAcquire(LEASE), lease -> {
            ObjectNode o = History.object().put("granted", lease.isPresent());
            lease.ifPresent(l -> o.put("holder", l.owner()).put("token", l.fencingToken()));
            return o;
        }, lease -> lease.map(l -> new Held(name, owner, l.fencingToken(), l.currentIndex())));
    }

    @Override
    Outcome<Found> find(ClientProcess process, String name, String owner) {
        Lock<Lease> lock = lock(process.client(), owner, name);
        return process.read("holder", key(name), History.object().put("owner", owner), lock::holders, holders -> {
            ObjectNode o = History.object();
            holders.stream().findFirst().ifPresent(h -> o.put("holder", h.owner()).put("token", h.fencingToken()));
            return o;
        }).map(holders -> {
            Optional<Held> ours = holders.stream().filter(h -> h.owner().equals(owner)).findFirst()
                    .map(h -> new Held(name, owner, h.fencingToken(), h.index()));
            return new Found(ours, ours.isPresent());
        });
    }

    @Override
    void use(ClientProcess process, Held held) {
        writeFenced(process, held);
        boolean holdLong = process.random().nextInt(LONG_HOLD_ONE_IN) == 0;
        sleep(process.random().nextInt((holdLong ? LONG_HOLD_MS : HOLD_MS) + 1));
    }

    @Override
    public void finalReads(ClientProcess reader) {
        for (String name : LOCKS) {
            finalRead(reader, FencedResource.PREFIX + name, "token");
        }
    }

    @Override
    public Checker checker() {
        return new LockChecker();
    }
}
