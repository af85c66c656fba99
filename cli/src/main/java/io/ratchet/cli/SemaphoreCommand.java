package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.common.Durations;
import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.lock.Lock;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.QueueLease;
import io.ratchet.recipes.lock.Semaphores;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code semaphore acquire|renew|release}: the leased counting semaphore ({@link Semaphores}) from the
 * command line. As with {@code lock}, a process that acquires exits holding its permit; it (or another)
 * renews or releases it by the index it printed.
 */
@Command(name = "semaphore", description = "Leased counting semaphores (N holders, first come first served): acquire, renew, release.",
        subcommands = {SemaphoreCommand.Acquire.class, SemaphoreCommand.Renew.class, SemaphoreCommand.Release.class})
final class SemaphoreCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(),
                "name what to do: semaphore acquire, semaphore renew or semaphore release");
    }

    @Command(name = "acquire", description = {
            "Take one of the --permits of semaphore NAME for --lease, waiting up to --wait in its queue.",
            "Every holder must give the same --permits (the first sets it; another number is refused, exit 2).",
            "Prints the owner, fencing token, index and expiry; exit 1 with the holders when no permit came."})
    static final class Acquire extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--permits", required = true, description = "how many may hold the semaphore at once (1.."
                + Semaphores.MAX_PERMITS + ")")
        int permits;
        @Option(names = "--lease", required = true, description = "how long the permit is held unless renewed, e.g. 30s (at most "
                + LockOptions.DEFAULT_MAX_LEASE_MINUTES + " min)")
        String lease;
        @Option(names = "--wait", defaultValue = "0s", description = "how long to wait for a permit (default ${DEFAULT-VALUE}: one try)")
        String wait;
        @Option(names = "--owner", description = "the owner id to record (default: host/pid/random)")
        String owner;

        @Override
        int run(RatchetClient c) {
            LockOptions options = owner == null ? LockOptions.defaults() : LockOptions.defaults().withOwner(owner);
            Lock<QueueLease> permit = new Semaphores(c, options).lock(name, permits);
            Optional<QueueLease> granted = LockCommand.acquire(permit, Durations.parse(lease), Durations.parse(wait));
            if (granted.isPresent()) {
                ObjectNode o = LockCommand.grant("acquired", granted.get());
                o.put("permits", permits);
                print(o);
                return ExitCode.DONE;
            }
            ObjectNode o = Output.object();
            o.put("acquired", false);
            o.put("name", name);
            o.put("permits", permits);
            ArrayNode holders = o.putArray("holders");
            permit.holders().forEach(h -> LockCommand.holder(holders.addObject(), h));
            print(o);
            return ExitCode.CONDITION_FAILED;
        }
    }

    @Command(name = "renew", description = "Extend the permit that semaphore NAME's queue has at --index by --lease; exit 1 when it was lost.")
    static final class Renew extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--index", required = true, description = "the permit's current index, as acquire or the last renew printed")
        long index;
        @Option(names = "--lease", required = true, description = "the new lease from now (cluster time), e.g. 30s")
        String lease;

        @Override
        int run(RatchetClient c) {
            try {
                print(LockCommand.grant("renewed", new Semaphores(c).renew(name, index, Durations.parse(lease))));
                return ExitCode.DONE;
            } catch (LeaseLostException e) {
                print(LockCommand.refused("renewed", name, e.holder()));
                return ExitCode.CONDITION_FAILED;
            }
        }
    }

    @Command(name = "release", description = "Give back the permit semaphore NAME's queue has at --index; exit 1 when it was lost.")
    static final class Release extends ClientCommand {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--index", required = true, description = "the permit's current index")
        long index;

        @Override
        int run(RatchetClient c) {
            try {
                new Semaphores(c).release(name, index);
                print(LockCommand.released(name));
                return ExitCode.DONE;
            } catch (LeaseLostException e) {
                print(LockCommand.refused("released", name, e.holder()));
                return ExitCode.CONDITION_FAILED;
            }
        }
    }
}
