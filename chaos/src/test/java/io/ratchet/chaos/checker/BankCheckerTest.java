package io.ratchet.chaos.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ratchet.chaos.history.Script;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Hand-written bank histories: two accounts of 100 each. */
class BankCheckerTest {
    private final Script s = new Script(BankChecker.WORKLOAD);

    BankCheckerTest() {
        s.call("setup", "open", null, "{\"balances\":{\"bank/a\":100,\"bank/b\":100}}", "{}");
    }

    private void read(String process, long a, long b) {
        s.call(process, "read", null, "{}", "{\"balances\":{\"bank/a\":" + a + ",\"bank/b\":" + b + "}}");
    }

    private void transfer(String process, long amount) {
        s.call(process, "transfer", null, "{\"from\":\"bank/a\",\"to\":\"bank/b\",\"amount\":" + amount + "}", "{\"applied\":true}");
    }

    private CheckResult check() {
        return new BankChecker().check(s.ops());
    }

    @Test
    void transfersThatKeepTheTotalAreValid() {
        transfer("1", 30);
        read("2", 70, 130);
        read("final", 70, 130);
        CheckResult r = check();
        assertEquals(Validity.VALID, r.validity(), r.toString());
    }

    @Test
    void aReadThatSeesMoneyInFlightIsFlagged() {
        read("2", 70, 100);
        read("final", 70, 130);
        assertEquals(List.of("wrong-total"), check().anomalies().stream().map(Anomaly::type).toList());
    }

    @Test
    void finalBalancesThatLostMoneyAreFlagged() {
        read("final", 70, 100);
        assertEquals(List.of("total-not-conserved"), check().anomalies().stream().map(Anomaly::type).toList());
    }

    @Test
    void aNegativeBalanceIsFlagged() {
        read("final", -10, 210);
        assertEquals(List.of("negative-balance"), check().anomalies().stream().map(Anomaly::type).toList());
    }

    @Test
    void withoutAFinalReadTheCheckIsUndecided() {
        read("2", 100, 100);
        assertEquals(Validity.UNKNOWN, check().validity());
    }
}
