package io.ratchet.chaos.workload;

import io.ratchet.client.UnknownOutcomeException;
import java.util.Map;

/**
 * What the bank workload needs from the cluster. A transfer must move money in one atomic step: two
 * conditional puts, one per account, are not that (a reader, or a crash, between them sees money
 * missing or doubled). Cluster transactions give it: {@link TransactionLedger}.
 */
public interface Ledger {
    /** Creates the accounts with these balances. */
    void open(Map<String, Long> balances);

    /**
     * Moves {@code amount} from one account to the other, atomically. Returns false, having moved
     * nothing, when {@code from} has less than {@code amount} or an account changed under it.
     *
     * @throws UnknownOutcomeException when the transfer got no answer
     */
    boolean transfer(String from, String to, long amount);

    /**
     * A transfer whose coordinator goes away half way, as a process that crashes would: after its prepare
     * or, with {@code afterCommit}, after its commit. The cluster finishes it (aborts, or applies it whole).
     * A ledger with nothing to abandon transfers as usual.
     *
     * @throws UnknownOutcomeException when it was abandoned: whether it applies is the cluster's to decide
     */
    default boolean abandon(String from, String to, long amount, boolean afterCommit) {
        return transfer(from, to, amount);
    }

    /** Every balance, read at one point in time (one linearizable read of all accounts). */
    Map<String, Long> balances();
}
