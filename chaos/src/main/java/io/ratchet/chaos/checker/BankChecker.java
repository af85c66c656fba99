package io.ratchet.chaos.checker;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.chaos.history.Operation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Checks the bank workload: transfers between accounts that must each be atomic. Every read of all
 * balances sees every account and the full total, no balance is negative (transfers never overdraw), and
 * the final balances add up to the total the accounts were opened with.
 *
 * <p>History lines it reads: {@code open} by process {@code setup}, input {@code {"balances":{a:n,...}}};
 * {@code transfer}, input {@code {"from":a,"to":b,"amount":n}}; {@code read} (by any process, the last by
 * {@code final}), output {@code {"balances":{a:n,...}}}.
 */
public final class BankChecker implements Checker {
    public static final String WORKLOAD = "bank";

    @Override
    public String workload() {
        return WORKLOAD;
    }

    @Override
    public CheckResult checkOperations(List<Operation> operations) {
        Map<String, Long> opened = operations.stream()
                .filter(op -> "open".equals(op.f()) && op.ok())
                .findFirst().map(op -> balances(op.invoke().input())).orElse(null);
        if (opened == null) {
            return new CheckResult(WORKLOAD, Validity.UNKNOWN, List.of(), List.of("undecided: the accounts were never opened"));
        }
        long total = opened.values().stream().mapToLong(Long::longValue).sum();
        List<Anomaly> anomalies = new ArrayList<>();
        int reads = 0;
        boolean finalRead = false;
        for (Operation op : operations) {
            if (!"read".equals(op.f()) || !op.ok()) {
                continue;
            }
            reads++;
            boolean last = "final".equals(op.process());
            finalRead |= last;
            Map<String, Long> seen = balances(op.completion().output());
            long sum = seen.values().stream().mapToLong(Long::longValue).sum();
            long line = op.completion().index();
            if (!seen.keySet().equals(opened.keySet())) {
                anomalies.add(new Anomaly(WORKLOAD, "missing-accounts", null, "a read saw accounts " + seen.keySet()
                        + " instead of " + opened.keySet(), List.of(line)));
            } else if (sum != total) {
                anomalies.add(new Anomaly(WORKLOAD, last ? "total-not-conserved" : "wrong-total", null,
                        (last ? "the final balances add up to " : "a read saw a total of ") + sum + " instead of " + total
                                + ": " + seen, List.of(line)));
            }
            Set<String> negative = new TreeSet<>();
            seen.forEach((account, balance) -> {
                if (balance < 0) {
                    negative.add(account + "=" + balance);
                }
            });
            if (!negative.isEmpty()) {
                anomalies.add(new Anomaly(WORKLOAD, "negative-balance", null, "a read saw " + negative, List.of(line)));
            }
        }
        List<String> notes = new ArrayList<>();
        notes.add(opened.size() + " accounts, total " + total + "; " + reads + " reads of every balance checked");
        if (!finalRead) {
            notes.add("undecided: no final read of the balances");
        }
        return CheckResult.of(WORKLOAD, anomalies, finalRead ? Validity.VALID : Validity.UNKNOWN, notes);
    }

    private static Map<String, Long> balances(JsonNode node) {
        Map<String, Long> balances = new TreeMap<>();
        for (Map.Entry<String, JsonNode> e : node.path("balances").properties()) {
            balances.put(e.getKey(), e.getValue().asLong());
        }
        return balances;
    }
}
