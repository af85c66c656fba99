package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.common.Durations;
import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.FairLocks;
import io.ratchet.recipes.lock.Grant;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.Lock;
import io.ratchet.recipes.lock.LockHolder;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import java.time.Duration;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code lock acquire|renew|release}: the lock recipe from the command line. A process that acquires
 * exits holding the lock; it (or another) renews or releases by the index it printed. With {@code --fair}
 * the fair lock ({@link FairLocks}): a place in the lock's queue, served first come, first served.
 */
@Command(name = "lock", description = "Leased locks with fencing tokens: acquire, renew, release.",
        subcommands = {LockCommand.Acquire.class, LockCommand.Renew.class, LockCommand.Release.class})
final class LockCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "name what to do: lock acquire, lock renew or lock release");
    }

    @Command(name = "acquire", description = {
            "Take lock NAME for --lease if it is free at cluster time, waiting up to --wait for it.",
            "Prints the owner, fencing token, index and expiry; exit 1 with the holder when it stays held.",
            "With --fair, waits in the lock's queue and is served in the order of arrival."})
    static final class Acquire extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--lease", required = true, description = "how long the lock is held unless renewed, e.g. 30s (at most "
                + LockOptions.DEFAULT_MAX_LEASE_MINUTES + " min)")
        String lease;
        @Option(names = "--wait", defaultValue = "0s", description = "how long to wait while it is held (default ${DEFAULT-VALUE}: one try)")
        String wait;
        @Option(names = "--owner", description = "the owner id to record (default: host/pid/random)")
        String owner;
        @Option(names = "--fair", description = "a fair lock: take a place in its queue and be served in turn, "
                + "first come, first served; no other waiter is woken meanwhile (renew and release it with --fair)")
        boolean fair;

        @Override
        int run(RatchetClient c) {
            LockOptions options = owner == null ? LockOptions.defaults() : LockOptions.defaults().withOwner(owner);
            Duration leaseTime = Durations.parse(lease);
            Duration waitTime = Durations.parse(wait);
            Lock<?> lock = fair ? new FairLocks(c, options).lock(name) : new Locks(c, options).lock(name);
            Optional<? extends Grant> granted = acquire(lock, leaseTime, waitTime);
            if (granted.isPresent()) {
                print(grant("acquired", granted.get()));
                return ExitCode.DONE;
            }
            print(refused("acquired", name, lock.holders().stream().findFirst()));
            return ExitCode.CONDITION_FAILED;
        }
    }

    @Command(name = "renew", description = "Extend the lease that lock NAME has at --index by --lease; exit 1 when it was lost.")
    static final class Renew extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--index", required = true, description = "the lock's current index, as acquire or the last renew printed")
        long index;
        @Option(names = "--lease", required = true, description = "the new lease from now (cluster time), e.g. 30s")
        String lease;
        @Option(names = "--fair", description = "the lock is a fair lock (acquired with --fair)")
        boolean fair;

        @Override
        int run(RatchetClient c) {
            try {
                Duration duration = Durations.parse(lease);
                print(grant("renewed", fair ? new FairLocks(c).renew(name, index, duration)
                        : new Locks(c).renew(name, index, duration)));
                return ExitCode.DONE;
            } catch (LeaseLostException e) {
                print(refused("renewed", name, e.holder()));
                return ExitCode.CONDITION_FAILED;
            }
        }
    }

    @Command(name = "release", description = "Free lock NAME if it is still at --index; exit 1 when it was lost.")
    static final class Release extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--index", required = true, description = "the lock's current index")
        long index;
        @Option(names = "--fair", description = "the lock is a fair lock (acquired with --fair)")
        boolean fair;

        @Override
        int run(RatchetClient c) {
            try {
                if (fair) {
                    new FairLocks(c).release(name, index);
                } else {
                    new Locks(c).release(name, index);
                }
                print(released(name));
                return ExitCode.DONE;
            } catch (LeaseLostException e) {
                print(refused("released", name, e.holder()));
                return ExitCode.CONDITION_FAILED;
            }
        }
    }

    /** One try when {@code wait} is zero, else a wait of up to {@code wait}: what every acquire command does. */
    static <G extends Grant> Optional<G> acquire(Lock<G> lock, Duration lease, Duration wait) {
        return wait.isZero() ? lock.tryAcquire(lease) : lock.acquire(lease, wait);
    }

    /** What a grant that went through prints, for any kind of lock. */
    static ObjectNode grant(String verb, Grant grant) {
        ObjectNode o = Output.object();
        o.put(verb, true);
        o.put("name", grant.name());
        o.put("owner", grant.owner());
        o.put("token", grant.fencingToken());
        o.put("index", grant.currentIndex());
        o.put("expiresAt", grant.expiresAt().toString());
        return o;
    }

    /** What a release that went through prints. */
    static ObjectNode released(String name) {
        ObjectNode o = Output.object();
        o.put("released", true);
        o.put("name", name);
        return o;
    }

    /** Why nothing happened: who holds the lock now (null when nobody does). */
    static ObjectNode refused(String verb, String name, Optional<LockHolder> holder) {
        ObjectNode o = Output.object();
        o.put(verb, false);
        o.put("name", name);
        if (holder.isEmpty()) {
            o.putNull("holder");
            return o;
        }
        holder(o.putObject("holder"), holder.get());
        return o;
    }

    /** A holder's fields, as {@code refused} prints them. */
    static ObjectNode holder(ObjectNode held, LockHolder h) {
        held.put("owner", h.owner());
        held.put("token", h.fencingToken());
        held.put("index", h.index());
        held.put("expiresAt", h.expiresAt().map(Object::toString).orElse(null));
        return held;
    }
}
