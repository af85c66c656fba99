package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.client.AddResult;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.common.Durations;
import io.ratchet.client.PutOptions;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Json;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The writes of single items: compare-exchange put and delete, and the commutative add. */
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
        @ArgGroup(exclusive = true, multiplicity = "0..1")
        Expiration expiration;

        /** At most one way to say when the item expires. */
        static final class Expiration {
            @Option(names = "--ttl", description = "expire this long after the write's cluster time, e.g. 30s")
            String ttl;
            @Option(names = "--expires", description = "expire at this ISO-8601 instant, e.g. 2030-01-01T00:00:00Z")
            String expires;
        }

        @Override
        int run(RatchetClient c) {
            PutOptions options = PutOptions.none();
            if (metadata != null) {
                options = options.metadata(Json.parse(metadata));
            }
            if (expiration != null && expiration.ttl != null) {
                options = options.ttl(Durations.parse(expiration.ttl));
            } else if (expiration != null) {
                options = options.expiresAt(parseInstant(expiration.expires));
            }
            // Parsed, so that what is stored is compact JSON however it was typed.
            return printWrite(this, c.put(key, Json.parse(value), index, options));
        }

        private static Instant parseInstant(String text) {
            try {
                return Instant.parse(text);
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("--expires '" + text + "' is not an ISO-8601 instant such as 2030-01-01T00:00:00Z");
            }
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

    @Command(name = "add", description = "Add an integer to the JSON integer under a key, with no index: adds never conflict "
            + "(an absent key counts as 0).")
    static final class Add extends ClientCommand {
        @Parameters(index = "0", paramLabel = "KEY")
        String key;
        @Parameters(index = "1", paramLabel = "DELTA", description = "a signed 64-bit integer, e.g. 1 or -5")
        long delta;
        @Option(names = "--idempotency-key", description = "apply at most once: a resend with this key returns the first outcome")
        String idempotencyKey;
        @Option(names = "--retention", defaultValue = "5m", description = "how long the cluster remembers the key (default ${DEFAULT-VALUE}, at most 24h)")
        String retention;

        @Override
        int run(RatchetClient c) {
            AddResult r = c.add(key, delta, idempotencyKey, idempotencyKey == null ? null : Durations.parse(retention));
            ObjectNode o = Output.object();
            o.put("successful", true);
            o.put("key", r.key());
            o.put("index", r.index());
            o.put("value", r.value());
            print(o);
            return ExitCode.DONE;
        }
    }
}
