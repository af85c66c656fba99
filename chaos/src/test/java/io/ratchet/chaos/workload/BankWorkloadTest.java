package io.ratchet.chaos.workload;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.chaos.checker.Anomaly;
import io.ratchet.chaos.checker.CheckResult;
import io.ratchet.chaos.checker.Validity;
import io.ratchet.chaos.history.History;
import io.ratchet.chaos.history.OpType;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The bank workload and its checker against in-memory ledgers: why the workload waits for cluster
 * transactions rather than run on two conditional puts.
 */
class BankWorkloadTest {

    /** What transactions will give: a transfer is one step. */
    static final class AtomicLedger implements Ledger {
        private final Map<String, Long> balances = new HashMap<>();

        @Override
        public synchronized void open(Map<String, Long> opening) {
            balances.putAll(opening);
        }

        @Override
        public synchronized boolean transfer(String from, String to, long amount) {
            if (balances.get(from) < amount) {
                return false;
            }
            balances.merge(from, -amount, Long::sum);
            balances.merge(to, amount, Long::sum);
            return true;
        }

        @Override
        public synchronized Map<String, Long> balances() {
            return new TreeMap<>(balances);
        }
    }

    /** What two conditional puts give: each account changes on its own, with a moment between. */
    static final class TwoStepLedger implements Ledger {
        private final AtomicLedger accounts = new AtomicLedger();

        @Override
        public void open(Map<String, Long> opening) {
            accounts.open(opening);
        }

        @Override
        public boolean transfer(String from, String to, long amount) {
            synchronized (accounts) {
                if (accounts.balances.get(from) < amount) {
                    return false;
                }
                accounts.balances.merge(from, -amount, Long::sum);
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            synchronized (accounts) {
                accounts.balances.merge(to, amount, Long::sum);
            }
            return true;
        }

        @Override
        public Map<String, Long> balances() {
            return accounts.balances();
        }
    }

    private static CheckResult run(Ledger ledger) throws InterruptedException {
        History history = History.inMemory();
        BankWorkload bank = new BankWorkload(Optional.of(client -> ledger), 0.005);
        bank.prepare(new ClientProcess(history, bank.name(), () -> "setup", null, new Random(1)));
        AtomicInteger ids = new AtomicInteger();
        WorkerPool pool = new WorkerPool(bank, 4, 2000, history, () -> Integer.toString(ids.getAndIncrement()), () -> null, 7);
        pool.start();
        int unstopped;
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> history.ops().stream()
                    .filter(op -> op.type() == OpType.OK && op.f().equals("read")).count() >= 50);
        } finally {
            unstopped = pool.stop(Duration.ofSeconds(30));
        }
        assertEquals(0, unstopped);
        assertEquals(0, pool.harnessErrors());
        bank.finalReads(new ClientProcess(history, bank.name(), () -> "final", null, new Random(2)));
        return bank.checker().check(history.ops());
    }

    @Test
    void atomicTransfersKeepEveryReadWhole() throws Exception {
        CheckResult r = run(new AtomicLedger());
        assertEquals(Validity.VALID, r.validity(), r.toString());
    }

    @Test
    void transfersMadeOfTwoSeparateWritesAreCaught() throws Exception {
        CheckResult r = run(new TwoStepLedger());
        assertEquals(Validity.INVALID, r.validity());
        assertTrue(r.anomalies().stream().map(Anomaly::type).anyMatch("wrong-total"::equals), r.toString());
    }

    @Test
    void withoutTransactionsTheWorkloadSaysWhyItCannotRun() {
        assertEquals(Optional.of("bank needs cluster transactions (issue 4)"),
                BankWorkload.withoutTransactions().unavailableReason());
    }
}
