package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Json;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** The compare-exchange writes: put and delete. */
final class WriteCommands {
    private WriteCommands() {
    }

    static int print(CommandSpec spec, boolean json, CompareExchangeResult r) {
        ObjectNode o = Output.object();
        o.put("successful", r.successful());
        o.put("key", r.key());
        o.put("index", r.index());
        o.set("value", Output.json(r.value()));
        o.set("metadata", Output.json(r.metadata()));
        Output.print(spec.commandLine().getOut(), json, o);
        return r.successful() ? ExitCode.DONE : ExitCode.CONDITION_FAILED;
    }

    @Command(name = "put", description = "Store a JSON value if the index matches (0: only if the key is absent).")
    static final class Put implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptionsMixin client;
        @Parameters(index = "0", paramLabel = "KEY")
        String key;
        @Parameters(index = "1", paramLabel = "VALUE_JSON", description = "any JSON value but null, e.g. '\"text\"' or '{\"a\":1}'")
        String value;
        @Option(names = "--index", required = true, description = "0 for create-only, else the item's current index")
        long index;
        @Option(names = "--metadata", description = "a JSON object, e.g. '{\"@expires\":\"2030-01-01T00:00:00Z\"}'")
        String metadata;

        @Override
        public Integer call() {
            var valueNode = Json.parse(value);
            var metadataNode = metadata == null ? null : Json.parse(metadata);
            try (RatchetClient c = client.connect()) {
                return print(spec, client.json, c.put(key, valueNode, index, metadataNode));
            }
        }
    }

    @Command(name = "delete", description = "Remove a key if the index matches its current one.")
    static final class Delete implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        ClientOptionsMixin client;
        @Parameters(index = "0", paramLabel = "KEY")
        String key;
        @Option(names = "--index", required = true, description = "the item's current index")
        long index;

        @Override
        public Integer call() {
            try (RatchetClient c = client.connect()) {
                return print(spec, client.json, c.delete(key, index));
            }
        }
    }
}
