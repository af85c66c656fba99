package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.Metrics;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.StaleRead;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Result;
import java.time.Instant;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ratchet stats}: the hot keys as the cluster counts them (refused conditions per key, on the
 * node that answers, the leader first) next to what this process's client saw of them. A command line
 * is a fresh client, so its own column is empty; an application reads its own with
 * {@code client.metrics()} beside {@code client.contention(n)}.
 */
@Command(name = "stats", description = "The keys whose conditions the cluster refused most: attempts, commits, refusals, attempts per commit.")
final class StatsCommand extends ClientCommand {
    @Option(names = "--top", defaultValue = "10", description = "how many keys (1.." + Limits.MAX_PAGE_SIZE + ", default ${DEFAULT-VALUE})")
    int top;

    @Override
    int run(RatchetClient c) {
        StaleRead<Result.Contention> cluster = c.contention(top);
        List<Metrics.KeyStats> client = c.metrics().hottest(top);
        if (json()) {
            ObjectNode o = Output.object();
            o.put("servedBy", cluster.servedBy());
            o.put("since", Instant.ofEpochMilli(cluster.value().since()).toString());
            ArrayNode keys = o.putArray("cluster");
            for (Result.KeyContention k : cluster.value().keys()) {
                ObjectNode row = keys.addObject();
                row.put("key", k.key());
                row.put("attempts", k.attempts());
                row.put("commits", k.commits());
                row.put("refused", k.refused());
                row.put("attemptsPerCommit", k.attemptsPerCommit());
            }
            ArrayNode mine = o.putArray("client");
            for (Metrics.KeyStats k : client) {
                ObjectNode row = mine.addObject();
                row.put("key", k.key());
                row.put("attempts", k.attempts());
                row.put("commits", k.commits());
                row.put("conflicts", k.conflicts());
                row.put("exhausted", k.exhausted());
            }
            print(o);
        } else {
            out().printf("cluster (node %s, counting since %s): refused conditions per key%n", cluster.servedBy(),
                    Instant.ofEpochMilli(cluster.value().since()));
            if (cluster.value().keys().isEmpty()) {
                out().println("  no condition refused yet");
            }
            for (Result.KeyContention k : cluster.value().keys()) {
                out().printf("  %-40s attempts %-8d commits %-8d refused %-8d attempts/commit %s%n", k.key(), k.attempts(),
                        k.commits(), k.refused(), k.attemptsPerCommit() == null ? "-" : String.format("%.2f", k.attemptsPerCommit()));
            }
            out().println("this client: " + (client.isEmpty() ? "no retry loop ran in this process" : ""));
            for (Metrics.KeyStats k : client) {
                out().printf("  %-40s attempts %-8d commits %-8d conflicts %-8d exhausted %d%n", k.key(), k.attempts(),
                        k.commits(), k.conflicts(), k.exhausted());
            }
            out().flush();
        }
        return ExitCode.DONE;
    }
}
