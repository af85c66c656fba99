package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.checker.BankChecker;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.history.History;
import io.ratchet.client.RatchetClient;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Money moves between a few accounts while readers read every balance at once; the total never
 * changes ({@link BankChecker}). It needs a {@link Ledger} with atomic transfers, which cluster
 * transactions give ({@link TransactionLedger}); without one it is unavailable, and says so, rather
 * than run on transfers made of two conditional puts, which are not atomic.
 */
public final class BankWorkload implements Workload {
    public static final String UNAVAILABLE = "bank needs cluster transactions (issue 4)";
    public static final String PREFIX = BankChecker.WORKLOAD + "/";
    private static final int ACCOUNTS = 5;
    private static final long OPENING_BALANCE = 100;
    private final Optional<Function<RatchetClient, Ledger>> ledgers;
    private final double abandonShare;

    /**
     * @param ledgers      opens a ledger over one process' client; empty while no atomic transfer exists
     * @param abandonShare the share of transfers abandoned half way, half of them after the prepare, half
     *                     after the commit in the primary ({@code --abandon}; the ledger abandons only a
     *                     transfer across groups)
     */
    public BankWorkload(Optional<Function<RatchetClient, Ledger>> ledgers, double abandonShare) {
        if (abandonShare < 0 || abandonShare > 1) {
            throw new IllegalArgumentException("the share of abandoned transfers is between 0 and 1, not " + abandonShare);
        }
        this.ledgers = ledgers;
        this.abandonShare = abandonShare;
    }

    /** The workload without a ledger: reported unavailable, for a cluster without transactions. */
    public static BankWorkload withoutTransactions() {
        return new BankWorkload(Optional.empty(), 0);
    }

    /** Transfers as cluster transactions over account items ({@link TransactionLedger}), {@code abandonShare} of them abandoned. */
    public static BankWorkload withTransactions(double abandonShare) {
        return new BankWorkload(Optional.of(client -> new TransactionLedger(client, PREFIX)), abandonShare);
    }

    @Override
    public String name() {
        return BankChecker.WORKLOAD;
    }

    @Override
    public Optional<String> unavailableReason() {
        return ledgers.isPresent() ? Optional.empty() : Optional.of(UNAVAILABLE);
    }

    private Ledger ledger(ClientProcess process) {
        return ledgers.orElseThrow(() -> new IllegalStateException(UNAVAILABLE)).apply(process.client());
    }

    @Override
    public void prepare(ClientProcess setup) {
        Map<String, Long> opening = new LinkedHashMap<>();
        for (int i = 0; i < ACCOUNTS; i++) {
            opening.put(PREFIX + "a" + i, OPENING_BALANCE);
        }
        Ledger ledger = ledger(setup);
        setup.write("open", null, History.object().set("balances", History.tree(opening)), () -> {
            ledger.open(opening);
            return true;
        }, done -> History.object());
    }

    @Override
    public Worker newWorker() {
        return process -> {
            Ledger ledger = ledger(process);
            if (process.random().nextInt(10) < 7) {
                String from = PREFIX + "a" + process.random().nextInt(ACCOUNTS);
                String to = PREFIX + "a" + process.random().nextInt(ACCOUNTS);
                long amount = 1 + process.random().nextInt(20);
                // Now and then the transfer's coordinator goes away half way, as a crashed process would, and the
                // cluster must finish it: its keys are held (for up to its lease) until then.
                double draw = process.random().nextDouble();
                process.write("transfer", null, History.object().put("from", from).put("to", to).put("amount", amount),
                        () -> draw < abandonShare ? ledger.abandon(from, to, amount, draw < abandonShare / 2)
                                : ledger.transfer(from, to, amount),
                        applied -> History.object().put("applied", applied));
            } else {
                read(process, ledger);
            }
        };
    }

    @Override
    public void finalReads(ClientProcess reader) {
        Ledger ledger = ledger(reader);
        for (int attempt = 0; attempt < 10 && !read(reader, ledger).ok(); attempt++) {
            Pause.briefly();
        }
    }

    private static Outcome<Map<String, Long>> read(ClientProcess process, Ledger ledger) {
        return process.read("read", null, History.object(), ledger::balances, BankWorkload::balances);
    }

    private static JsonNode balances(Map<String, Long> balances) {
        ObjectNode o = History.object();
        o.set("balances", History.tree(balances));
        return o;
    }

    @Override
    public Checker checker() {
        return new BankChecker();
    }
}
