package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.lock.Lock;
import io.ratchet.recipes.lock.LockKind;
import io.ratchet.recipes.lock.QueueLease;
import io.ratchet.recipes.lock.Semaphores;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
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
    static final class Acquire extends LockCommand.AcquireGrant {
        @Option(names = "--permits", required = true, description = "how many may hold the semaphore at once (1.."
                + Semaphores.MAX_PERMITS + ")")
        int permits;

        @Override
        int run(RatchetClient c) {
            Lock<QueueLease> permit = new Semaphores(c, options()).lock(name, permits);
            Optional<QueueLease> granted = acquire(permit);
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
    static final class Renew extends LockCommand.RenewGrant {
        @Override
        LockKind<?> kind(RatchetClient c) {
            return new Semaphores(c);
        }
    }

    @Command(name = "release", description = "Give back the permit semaphore NAME's queue has at --index; exit 1 when it was lost.")
    static final class Release extends LockCommand.ReleaseGrant {
        @Override
        LockKind<?> kind(RatchetClient c) {
            return new Semaphores(c);
        }
    }
}
