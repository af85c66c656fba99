package io.ratchet.chaos.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.chaos.history.Op;
import io.ratchet.chaos.history.Script;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Hand-written renew histories: a holder takes lock {@code locks/renew-1} with a 5 s lease and renews it
 * every 1.7 s; checked by {@link RenewChecker}, which finds every way the holder learns its lock is gone
 * and measures how much lease each renewal had left.
 */
class RenewCheckerTest {
    private static final String KEY = "locks/renew-1";
    private final Script s = new Script(RenewChecker.WORKLOAD);

    private void acquire(long at, String owner) {
        s.at(at).call("1", "acquire", KEY, "{\"owner\":\"" + owner + "\",\"lease_ms\":5000}", "{\"granted\":true,\"token\":7,\"index\":7}");
    }

    private Op renew(long at, String owner) {
        return s.at(at).invoke("1", "renew", KEY, "{\"owner\":\"" + owner + "\",\"lease_ms\":5000,\"token\":7,\"index\":7}");
    }

    private void renewed(Op renew, long at) {
        s.at(at).ok(renew, "{\"renewed\":true,\"index\":9}");
    }

    private CheckResult check() {
        return new RenewChecker().check(s.ops());
    }

    @Test
    void aHolderThatKeepsRenewingIsValidAndTheLeastLeaseLeftIsReported() {
        acquire(0, "r1");
        renewed(renew(1_700, "r1"), 1_710);
        renewed(renew(3_400, "r1"), 6_500); // answered 4.8 s after the renewal it follows was sent: 0.2 s left
        s.at(6_600).call("1", "release", KEY, "{\"owner\":\"r1\",\"token\":7}", "{\"released\":true}");

        CheckResult r = check();

        assertEquals(Validity.VALID, r.validity(), r.toString());
        assertEquals(2L, r.details().get("renewals"));
        assertEquals(199L, r.details().get("least_lease_left_ms"), "5 s from 1.7 s, less the answer at 6.5 s (and a tick)");
        assertEquals(3_101L, r.details().get("longest_renewal_ms"));
    }

    @Test
    void aRenewalAnsweredAfterTheLeaseRanOutIsLateEvenThoughItLanded() {
        acquire(0, "r1");
        renewed(renew(1_700, "r1"), 5_300); // the lease of the acquire, sent at 0, ran out at 5.0 s

        CheckResult r = check();

        assertEquals(List.of("renewal-late"), r.anomalies().stream().map(Anomaly::type).toList());
        assertTrue(r.anomalies().get(0).detail().contains("answered 301 ms after its lease"), r.anomalies().get(0).detail());
        assertEquals(-301L, r.details().get("least_lease_left_ms"));
    }

    @Test
    void aRenewalThatFindsTheLockGoneIsALostLease() {
        acquire(0, "r1");
        renewed(renew(1_700, "r1"), 1_710);
        s.at(3_400).call("1", "renew", KEY, "{\"owner\":\"r1\",\"lease_ms\":5000,\"token\":7,\"index\":9}",
                "{\"renewed\":false,\"lost\":true}");

        CheckResult r = check();

        assertEquals(Validity.INVALID, r.validity());
        assertEquals(List.of("lease-lost"), r.anomalies().stream().map(Anomaly::type).toList());
        assertTrue(r.anomalies().get(0).detail().contains("1700 ms after the last renewal that landed"), r.anomalies().get(0).detail());
    }

    @Test
    void aRenewalThatWaitedPastTheLeaseAndFoundTheLockGoneIsLateNotLostEarly() {
        acquire(0, "r1");
        renewed(renew(1_700, "r1"), 1_710);
        Op late = renew(3_400, "r1");
        s.at(8_700).ok(late, "{\"renewed\":false,\"lost\":true}"); // the lease from 1.7 s ran out at 6.7 s

        CheckResult r = check();

        assertEquals(List.of("renewal-late"), r.anomalies().stream().map(Anomaly::type).toList());
        assertTrue(r.anomalies().get(0).detail().contains("answered 2001 ms after its lease")
                && r.anomalies().get(0).detail().contains("found the lock gone: lost to the wait"), r.anomalies().get(0).detail());
        assertEquals(-2_001L, r.details().get("least_lease_left_ms"), "6.7 s, less the answer at 8.7 s (and a tick)");
    }

    @Test
    void aReadAfterAnUnansweredRenewalThatFindsTheLockGoneIsALostLease() {
        acquire(0, "r1");
        s.at(1_700).info(renew(1_700, "r1"));
        s.at(9_000).call("1", "holder", KEY, "{\"owner\":\"r1\"}", "{\"holds\":false}");
        acquire(9_100, "r2");
        s.at(9_200).call("1", "holder", KEY, "{\"owner\":\"r2\"}", "{\"holds\":true,\"index\":12}");

        CheckResult r = check();

        assertEquals(List.of("lease-lost"), r.anomalies().stream().map(Anomaly::type).toList());
        assertEquals(KEY, r.anomalies().get(0).key());
    }

    @Test
    void aReleaseThatFindsTheLockGoneIsALostLeaseButAFailedOrUnansweredOneIsNot() {
        acquire(0, "r1");
        s.at(1_000).call("1", "release", KEY, "{\"owner\":\"r1\",\"token\":7}", "{\"released\":false}");
        acquire(2_000, "r2");
        s.at(2_100).fail(s.invoke("1", "release", KEY, "{\"owner\":\"r2\",\"token\":8}"));
        acquire(3_000, "r3");
        s.at(3_100).info(s.invoke("1", "release", KEY, "{\"owner\":\"r3\",\"token\":9}"));

        assertEquals(List.of("lease-lost"), check().anomalies().stream().map(Anomaly::type).toList());
    }

    @Test
    void anAcquireNotGrantedStartsNoHold() {
        s.at(0).call("1", "acquire", KEY, "{\"owner\":\"r1\",\"lease_ms\":5000}", "{\"granted\":false}");

        CheckResult r = check();

        assertEquals(Validity.VALID, r.validity());
        assertEquals(0L, r.details().get("holds"));
        assertEquals(0L, r.details().get("renewals"));
    }
}
