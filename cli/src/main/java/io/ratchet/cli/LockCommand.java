package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.common.Durations;
import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.FairLocks;
import io.ratchet.recipes.lock.Grant;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.Lock;
import io.ratchet.recipes.lock.LockHolder;
import io.ratchet.recipes.lock.LockKind;
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
    static final class Acquire extends AcquireGrant {
        @Option(names = "--fair", description = "a fair lock: take a place in its queue and be served in turn, "
                + "first come, first served; no other waiter is woken meanwhile (renew and release it with --fair)")
        boolean fair;

        @Override
        int run(RatchetClient c) {
            Lock<?> lock = fair ? new FairLocks(c, options()).lock(name) : new Locks(c, options()).lock(name);
            Optional<? extends Grant> granted = acquire(lock);
            if (granted.isPresent()) {
                print(grant("acquired", granted.get()));
                return ExitCode.DONE;
            }
            print(refused("acquired", name, lock.holders().stream().findFirst()));
            return ExitCode.CONDITION_FAILED;
        }
    }

    @Command(name = "renew", description = "Extend the lease that lock NAME has at --index by --lease; exit 1 when it was lost.")
    static final class Renew extends RenewGrant {
        @Option(names = "--fair", description = "the lock is a fair lock (acquired with --fair)")
        boolean fair;

        @Override
        LockKind<?> kind(RatchetClient c) {
            return fair ? new FairLocks(c) : new Locks(c);
        }
    }

    @Command(name = "release", description = "Free lock NAME if it is still at --index; exit 1 when it was lost.")
    static final class Release extends ReleaseGrant {
        @Option(names = "--fair", description = "the lock is a fair lock (acquired with --fair)")
        boolean fair;

        @Override
        LockKind<?> kind(RatchetClient c) {
            return fair ? new FairLocks(c) : new Locks(c);
        }
    }

    /** {@code renew} or {@code release} of the grant at {@code NAME --index}, for every kind of lock. */
    abstract static class AtIndex extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--index", required = true, description = "the grant's current index, as acquire or the last renew printed")
        long index;

        /** The kind of lock the subcommand is for. */
        abstract LockKind<?> kind(RatchetClient c);

        /** Renews or releases; what it prints when that went through. */
        abstract ObjectNode act(LockKind<?> kind);

        /** What was done, as the output names it: {@code renewed} or {@code released}. */
        abstract String verb();

        @Override
        int run(RatchetClient c) {
            try {
                print(act(kind(c)));
                return ExitCode.DONE;
            } catch (LeaseLostException e) {
                print(refused(verb(), name, e.holder()));
                return ExitCode.CONDITION_FAILED;
            }
        }
    }

    abstract static class RenewGrant extends AtIndex {
        @Option(names = "--lease", required = true, description = "the new lease from now (cluster time), e.g. 30s")
        String lease;

        @Override
        ObjectNode act(LockKind<?> kind) {
            return grant(verb(), kind.renew(name, index, Durations.parse(lease)));
        }

        @Override
        String verb() {
            return "renewed";
        }
    }

    abstract static class ReleaseGrant extends AtIndex {
        @Override
        ObjectNode act(LockKind<?> kind) {
            kind.release(name, index);
            return released(name);
        }

        @Override
        String verb() {
            return "released";
        }
    }

    /** {@code acquire NAME --lease --wait --owner}, for every kind of lock: a subcommand makes the lock. */
    abstract static class AcquireGrant extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--lease", required = true, description = "how long the grant is held unless renewed, e.g. 30s (at most "
                + LockOptions.DEFAULT_MAX_LEASE_MINUTES + " min)")
        String lease;
        @Option(names = "--wait", defaultValue = "0s", description = "how long to wait for it (default ${DEFAULT-VALUE}: one try)")
        String wait;
        @Option(names = "--owner", description = "the owner id to record (default: host/pid/random)")
        String owner;

        LockOptions options() {
            return owner == null ? LockOptions.defaults() : LockOptions.defaults().withOwner(owner);
        }

        /** One try when {@code --wait} is zero, else a wait of up to it. */
        <G extends Grant> Optional<G> acquire(Lock<G> lock) {
            Duration leaseTime = Durations.parse(lease);
            Duration waitTime = Durations.parse(wait);
            return waitTime.isZero() ? lock.tryAcquire(leaseTime) : lock.acquire(leaseTime, waitTime);
        }
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
