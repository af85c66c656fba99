package io.ratchet.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.common.Durations;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.TransactionOps;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code txn OPS_JSON}: every operation applies, at one index, or none does and every conflict is listed. */
@Command(name = "txn", description = "Apply operations all or nothing: every condition holds and all writes land at one"
        + " index, or nothing is written and each conflict is listed (exit 1).")
final class TransactionCommand extends ClientCommand {
    @Parameters(index = "0", paramLabel = "OPS_JSON", description = "a JSON array: {\"op\":\"put\",\"key\":K,\"value\":V,"
            + "\"index\":N[,\"metadata\":{}]}, {\"op\":\"delete\"|\"check\",\"key\":K,\"index\":N}, "
            + "{\"op\":\"put-document\",\"id\":ID,\"document\":{},\"index\":G}, {\"op\":\"delete-document\",\"id\":ID,\"index\":G}")
    String ops;
    @Option(names = "--idempotency-key", description = "apply at most once: a resend with this key returns the first outcome")
    String idempotencyKey;
    @Option(names = "--retention", defaultValue = "5m", description = "how long the cluster remembers the key (default ${DEFAULT-VALUE}, at most 24h)")
    String retention;

    @Override
    int run(RatchetClient c) {
        TransactionResult r = c.transaction(TransactionOps.parse(ops), idempotencyKey,
                idempotencyKey == null ? null : Durations.parse(retention));
        ObjectNode o = Output.object();
        o.put("successful", r.successful());
        o.put("index", r.index());
        if (!r.indexes().isEmpty()) {
            // across groups: each written key's index in its own group
            r.indexes().forEach(o.putObject("indexes")::put);
        }
        ArrayNode conflicts = o.putArray("conflicts");
        for (Result.Conflict conflict : r.conflicts()) {
            conflicts.addObject().put("key", conflict.key()).put("expected", conflict.expected()).put("actual", conflict.actual());
        }
        print(o);
        return r.successful() ? ExitCode.DONE : ExitCode.CONDITION_FAILED;
    }
}
