package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.common.Durations;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.WatchResult;
import io.ratchet.protocol.Limits;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code watch KEY --after N --timeout 10s}: waits for a put or delete of KEY above index N. Here the
 * shared {@code --timeout} is how long to wait for a change (at most {@link Limits#MAX_WATCH_SECONDS}); the cluster is given as
 * long again to answer.
 */
@Command(name = "watch", description = {
        "Wait until KEY is put or deleted at an index above --after, or --timeout (at most " + Limits.MAX_WATCH_SECONDS + "s) passes.",
        "Prints changed, lastChange and the key's item; exit 0 when it changed, 1 when the wait timed out."})
final class WatchCommand extends ClientCommand {
    @Parameters(index = "0", paramLabel = "KEY")
    String key;
    @Option(names = "--after", defaultValue = "0", description = "report a change above this index (default ${DEFAULT-VALUE}: any)")
    long after;

    @Override
    int run(RatchetClient c) {
        WatchResult w = c.watch(key, after, Durations.parse(client().timeout));
        ObjectNode o = Output.object();
        o.put("changed", w.changed());
        o.put("lastChange", w.lastChange());
        o.setAll(w.item().map(Output::item).orElseGet(() -> Output.absent(key)));
        print(o);
        return w.changed() ? ExitCode.DONE : ExitCode.CONDITION_FAILED;
    }
}
