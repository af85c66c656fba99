package io.ratchet.statemachine;

import java.util.List;

/**
 * Work a group's leader does for the transactions across groups whose coordinator went away (see
 * {@link CompareExchangeStore#transactionWork}): {@code EXPIRE} a pending record whose lease ran out;
 * {@code FORGET} a decided record once none of {@code groups} holds the transaction's intents; for an intent
 * with no record here, {@code ASK_PRIMARY} group {@code primary} for the outcome, then settle it so.
 */
public record TxnWork(String txn, Kind kind, int primary, List<Integer> groups) {
    public enum Kind {
        EXPIRE, FORGET, ASK_PRIMARY
    }

    public TxnWork {
        groups = List.copyOf(groups);
    }
}
