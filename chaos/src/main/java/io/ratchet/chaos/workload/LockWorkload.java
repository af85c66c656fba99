package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.history.History;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.Lock;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What every lock workload's processes do, whatever the kind of lock ({@link LocksWorkload},
 * {@link FairLockWorkload}, {@link SemaphoreWorkload}): acquire as a fresh owner, use the grant, release
 * it. A process whose acquire or release got no answer reads the lock to learn what it did and finishes
 * the job, as a client that lost its connection must: a grant it finds is used and released if its lease
 * may not have run out (counted from when the acquire was sent), else given back unused, as the lock
 * clients give back a late answer; any other place it finds is given back. A subclass says how its kind
 * acquires, reads and uses a lock, and how each is recorded; releases go through {@link Lock#release(long)},
 * since a grant learned from a read is known only by its index.
 */
abstract class LockWorkload implements Workload {
    private final String ownerPrefix;
    private final Duration lease;
    private final AtomicLong owners = new AtomicLong();

    /**
     * @param ownerPrefix starts every owner id, which is unique to one acquire attempt
     * @param lease       every acquire's lease: how long after it was sent a grant found by a read may be used
     */
    LockWorkload(String ownerPrefix, Duration lease) {
        this.ownerPrefix = ownerPrefix;
        this.lease = lease;
    }

    /**
     * A grant, or a place in a queue: the lock's name, its owner, its fencing token (0 while waiting) and
     * its current index, which a release is conditioned on.
     */
    record Held(String name, String owner, long token, long index) {
    }

    /** What a read found of one owner: its place, if the lock has one of it, and whether that place holds the lock. */
    record Found(Optional<Held> place, boolean holds) {
    }

    /** One recorded acquire: of which lock, when it was sent ({@link System#nanoTime()}), and the grant if any. */
    record Attempt(String name, long sentNanos, Outcome<Optional<Held>> grant) {
    }

    /** The key histories name lock {@code name} by. */
    abstract String key(String name);

    /** Lock {@code name} as {@code owner} holds it, over {@code client}. */
    abstract Lock<?> lock(RatchetClient client, String owner, String name);

    /** Runs and records one acquire by {@code owner} (with {@link #recordAcquire}). */
    abstract Attempt acquire(ClientProcess process, String owner);

    /** Runs and records (as a {@code "holder"} read, input {@code {"owner":o}}) a read of lock {@code name} for {@code owner}. */
    abstract Outcome<Found> find(ClientProcess process, String name, String owner);

    /** What a holder does with the lock before it releases it: writes under its token, and a hold. */
    abstract void use(ClientProcess process, Held held);

    @Override
    public final Worker newWorker() {
        return new LockWorker();
    }

    private final class LockWorker implements Worker {
        /** The place (token 0) of an acquire that got no answer, and that no read has settled yet. */
        private Held undetermined;
        /** When that acquire was sent: its lease, if granted, runs from no earlier. */
        private long undeterminedSent;
        /** A grant whose release got no answer. */
        private Held unreleased;

        @Override
        public void step(ClientProcess process) {
            if (undetermined != null || unreleased != null) {
                settle(process);
                return;
            }
            String owner = ownerPrefix + owners.incrementAndGet();
            Attempt attempt = acquire(process, owner);
            if (attempt.grant().unknown()) {
                undetermined = new Held(attempt.name(), owner, 0, 0);
                undeterminedSent = attempt.sentNanos();
                settle(process);
            } else if (attempt.grant().ok() && attempt.grant().value().isPresent()) {
                holdAndRelease(process, attempt.grant().value().get());
            }
        }

        @Override
        public void finish(ClientProcess process) {
            for (int attempt = 0; attempt < 3 && (undetermined != null || unreleased != null); attempt++) {
                settle(process);
            }
        }

        /** Reads the lock to learn what an unanswered acquire or release did, and finishes the job. */
        private void settle(ClientProcess process) {
            Held pending = undetermined != null ? undetermined : unreleased;
            Outcome<Found> read = find(process, pending.name(), pending.owner());
            if (!read.ok()) {
                return; // try again next step
            }
            Found found = read.value();
            if (pending == undetermined) {
                undetermined = null;
                boolean leaseLeft = System.nanoTime() - undeterminedSent < lease.toNanos();
                if (found.holds() && leaseLeft) {
                    holdAndRelease(process, found.place().get());
                    return;
                }
            } else {
                unreleased = null;
            }
            found.place().ifPresent(place -> release(process, place));
        }

        private void holdAndRelease(ClientProcess process, Held held) {
            use(process, held);
            release(process, held);
        }

        private void release(ClientProcess process, Held held) {
            Lock<?> lock = lock(process.client(), held.owner(), held.name());
            Outcome<Boolean> released = process.write("release", key(held.name()),
                    History.object().put("owner", held.owner()).put("token", held.token()), () -> {
                        try {
                            lock.release(held.index());
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

    /**
     * Runs {@code call} as the {@code "acquire"} of lock {@code name}, recording {@code input} and the
     * answer as {@code output} says, and notes when it was sent.
     */
    final <T> Attempt recordAcquire(ClientProcess process, String name, ObjectNode input, Supplier<T> call,
                                    Function<? super T, JsonNode> output, Function<T, Optional<Held>> grant) {
        long[] sent = new long[1];
        Outcome<T> outcome = process.write("acquire", key(name), input, () -> {
            sent[0] = System.nanoTime();
            return call.get();
        }, output);
        return new Attempt(name, sent[0], outcome.map(grant));
    }

    /** The input every acquire records: its owner and its lease. */
    final ObjectNode acquireInput(String owner) {
        return History.object().put("owner", owner).put("lease_ms", lease.toMillis());
    }

    final Duration lease() {
        return lease;
    }

    /** Writes to lock {@code held.name()}'s fenced resource under the holder's token, once or twice. */
    static void writeFenced(ClientProcess process, Held held) {
        int writes = 1 + process.random().nextInt(2);
        for (int i = 0; i < writes; i++) {
            process.write("write", FencedResource.PREFIX + held.name(),
                    History.object().put("owner", held.owner()).put("token", held.token()),
                    () -> FencedResource.write(process.client(), held.name(), held.token(), held.owner()),
                    a -> History.object().put("accepted", a.accepted()).put("index", a.index()).put("highest", a.highest()));
        }
    }

    /**
     * The final read of {@code key}, retried while it gets no answer (a bounded number of times): output
     * its index and its value's number {@code field}.
     */
    static void finalRead(ClientProcess reader, String key, String field) {
        for (int attempt = 0; attempt < 10; attempt++) {
            Outcome<Optional<Item>> read = reader.read("read", key, History.object(), () -> reader.client().get(key), item -> {
                ObjectNode o = History.object().put("index", item.map(Item::index).orElse(0L));
                item.ifPresent(i -> o.put(field, i.valueNode().path(field).asLong()));
                return o;
            });
            if (read.ok()) {
                break;
            }
            Pause.briefly();
        }
    }

    /** A queue entry's key as histories name it: its last segment, which orders entries that share a place. */
    static String entry(String key) {
        return key.substring(key.lastIndexOf('/') + 1).toLowerCase(Locale.ROOT);
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
