package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Json;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The compare-exchange writes: put and delete. */
final class WriteCommands {
    private WriteCommands() {
    }

    /** Prints a write's result; exit 1 when its condition failed. */
    static int printWrite(ClientCommand command, CompareExchangeResult r) {
        ObjectNode o = Output.object();
        o.put("successful", r.successful());
        o.put("key", r.key());
        o.put("index", r.index());
        o.set("value", Output.json(r.value()));
        o.set("metadata", Output.json(r.metadata()));
        command.print(o);
        return r.successful() ? ExitCode.DONE : ExitCode.CONDITION_FAILED;
    }

    @Command(name = "put", description = "Store a JSON value if the index matches (0: only if the key is absent).")
    static final class Put extends ClientCommand {
        @Parameters(index = "0", paramLabel = "KEY")
        String key;
        @Parameters(index = "1", paramLabel = "VALUE_JSON", description = "any JSON value but null, e.g. '\"text\"' or '{\"a\":1}'")
        String value;
        @Option(names = "--index", required = true, description = "0 for create-only, else the item's current index")
        long index;
        @Option(names = "--metadata", description = "a JSON object, e.g. '{\"@expires\":\"2030-01-01T00:00:00Z\"}'")
        String metadata;

        @Override
        int run(RatchetClient c) {
            return printWrite(this, c.put(key, Json.parse(value), index, metadata == null ? null : Json.parse(metadata)));
        }
    }

    @Command(name = "delete", description = "Remove a key if the index matches its current one.")
    static final class Delete extends ClientCommand {
        @Parameters(index = "0", paramLabel = "KEY")
        String key;
        @Option(names = "--index", required = true, description = "the item's current index")
        long index;

        @Override
        int run(RatchetClient c) {
            return printWrite(this, c.delete(key, index));
        }
    }
}
