package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.ByteSize;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Result;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code ratchet quota}: what the cluster's state uses of its storage quota; {@code ratchet quota set
 * SIZE} changes the quota through the log, so every replica refuses the same writes from then on.
 */
@Command(name = "quota", description = "The storage quota: how much of it the state uses; 'quota set SIZE' changes it.",
        subcommands = QuotaCommand.Set.class)
final class QuotaCommand extends ClientCommand {
    @Override
    int run(RatchetClient c) {
        show(this, c.quota());
        return ExitCode.DONE;
    }

    /** Prints {@code q} as {@code command}'s output: text, or JSON with {@code --json}. */
    static void show(ClientCommand command, Result.Quota q) {
        if (command.json()) {
            ObjectNode o = Output.object();
            o.put("used", q.used());
            o.put("quota", q.quota());
            o.put("percent", percent(q));
            o.put("alarm", q.alarm());
            command.print(o);
        } else {
            command.out().printf("storage: %s of %s quota (%d%%)%s%n", ByteSize.format(q.used()), ByteSize.format(q.quota()),
                    percent(q), q.alarm() ? "  ALARM: at or over " + Limits.QUOTA_ALARM_PERCENT
                            + "%; writes that grow the state are refused at 100%" : "");
            command.out().flush();
        }
    }

    static long percent(Result.Quota q) {
        return q.quota() == 0 ? 0 : q.used() * 100 / q.quota();
    }

    @Command(name = "set", description = "Set the storage quota for the whole cluster (a log entry; the leader refuses "
            + "one larger than its disk). Lowering it below what is used refuses growth and deletes nothing.")
    static final class Set extends ClientCommand {
        @Parameters(index = "0", paramLabel = "SIZE",
                description = "bytes, or a number with KiB, MiB, GiB or TiB: 1 MiB .. 1 TiB")
        String size;

        @Override
        int run(RatchetClient c) {
            show(this, c.setQuota(ByteSize.parse(size)));
            return ExitCode.DONE;
        }
    }
}
