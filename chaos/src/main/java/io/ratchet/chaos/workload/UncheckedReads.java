package io.ratchet.chaos.workload;

import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.protocol.Command;
import java.util.List;

/**
 * FOR TESTING THE HARNESS ONLY: a deliberately broken append client whose transactions drop their
 * {@link Command.Check}s, so the keys a transaction only read are no longer validated at commit: another
 * transaction may append to them between the read and the commit, and the transaction commits on a stale
 * read (read skew, write skew). The history still records the reads as part of the transaction, and the
 * append checker must find the cycles (G-single, G2-item). Only the hidden {@code --test-skip-read-checks}
 * option turns it on, and the summary names the mode.
 */
public final class UncheckedReads implements AppendClient {
    private final RatchetClient client;

    public UncheckedReads(RatchetClient client) {
        this.client = client;
    }

    @Override
    public TransactionResult transaction(List<Command.Op> ops) {
        return client.transaction(ops.stream().filter(op -> !(op instanceof Command.Check)).toList());
    }

    @Override
    public RatchetClient client() {
        return client;
    }
}
