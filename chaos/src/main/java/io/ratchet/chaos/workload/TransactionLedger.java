package io.ratchet.chaos.workload;

import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Limits;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A ledger of accounts as compare-exchange items, where a transfer is one cluster transaction: both
 * balances are written at the indexes they were read at, or neither is. Balances are read with one
 * linearizable list, so a reader sees the state between two entries, never inside one.
 */
public final class TransactionLedger implements Ledger {
    private final RatchetClient client;
    private final String prefix;

    public TransactionLedger(RatchetClient client, String prefix) {
        this.client = client;
        this.prefix = prefix;
    }

    @Override
    public void open(Map<String, Long> balances) {
        List<Command.Op> creates = new ArrayList<>();
        balances.forEach((account, balance) -> creates.add(new Command.Put(account, Long.toString(balance), 0, null)));
        TransactionResult opened = client.transaction(creates);
        if (!opened.successful()) {
            throw new IllegalStateException("accounts already exist: " + opened.conflicts());
        }
    }

    @Override
    public boolean transfer(String from, String to, long amount) {
        if (from.equals(to)) {
            return false; // moves nothing; a transaction may not name a key twice
        }
        List<Command.Op> puts = puts(from, to, amount);
        return puts != null && client.transaction(puts).successful();
    }

    /**
     * The transfer's two conditional puts, from both balances read at one moment: the source's debit, then
     * the target's credit; null when the source has less than {@code amount}.
     */
    private List<Command.Op> puts(String from, String to, long amount) {
        Map<String, Item> accounts = new LinkedHashMap<>();
        client.getAll(List.of(from, to)).forEach(item -> accounts.put(item.key(), item));
        Item source = accounts.get(from);
        Item target = accounts.get(to);
        if (source == null || target == null) {
            throw new IllegalStateException("no account " + (source == null ? from : to));
        }
        long balance = Long.parseLong(source.value());
        if (balance < amount) {
            return null;
        }
        return List.of(new Command.Put(from, Long.toString(balance - amount), source.index(), null),
                new Command.Put(to, Long.toString(Long.parseLong(target.value()) + amount), target.index(), null));
    }

    /**
     * Prepares the transfer in both accounts' groups by hand, the primary first, commits it or not, and
     * stops there: what the client's coordinator does, cut short. The accounts' reads and conditions are a
     * transfer's. In one group there is nothing to cut short: it is a transfer.
     */
    @Override
    public boolean abandon(String from, String to, long amount, boolean afterCommit) {
        int groups = client.groups();
        int primary = Groups.of(from, groups);
        int other = Groups.of(to, groups);
        if (primary == other || from.equals(to)) {
            return transfer(from, to, amount);
        }
        List<Command.Op> puts = puts(from, to, amount);
        if (puts == null) {
            return false;
        }
        String txn = "abandoned-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
        List<Integer> both = List.of(Math.min(primary, other), Math.max(primary, other));
        Result first = send(primary, new Command.Prepare(txn, primary, both, 5_000, true, List.of(puts.get(0))));
        if (!(first instanceof Result.TxnState)) {
            return false; // nothing held: a conflict, or a key held by another transaction
        }
        Result second = send(other, new Command.Prepare(txn, primary, both, 5_000, false, List.of(puts.get(1))));
        if (second instanceof Result.TxnState && afterCommit) {
            send(primary, new Command.Settle(txn, Command.Settle.Step.COMMIT));
        }
        throw new UnknownOutcomeException("transaction " + txn + " abandoned after its " + (afterCommit ? "commit" : "prepare")
                + ": the cluster finishes it", null);
    }

    private Result send(int group, Command command) {
        return RatchetClient.await(client.submitAsync(group, Request.of(List.of(command)))).get(0);
    }

    @Override
    public Map<String, Long> balances() {
        Map<String, Long> balances = new LinkedHashMap<>();
        for (Item item : client.list(prefix, 0, Limits.MAX_PAGE_SIZE)) {
            balances.put(item.key(), Long.parseLong(item.value()));
        }
        return balances;
    }
}
