package io.ratchet.protocol;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The one boundary every reader of an expiry shares: the state machine, the sweeper, recipes, metrics. */
class ExpiryTest {
    @Test
    void aLeaseEndsTheMillisecondClusterTimeReachesItsExpiry() {
        assertFalse(Expiry.expired(2_000, 1_999), "one millisecond before: still held");
        assertTrue(Expiry.expired(2_000, 2_000), "at its expiry: up for grabs");
        assertTrue(Expiry.expired(2_000, 2_001));
    }

    @Test
    void anItemWithoutExpiryNeverExpires() {
        assertFalse(Expiry.expired(0, 0));
        assertFalse(Expiry.expired(0, Long.MAX_VALUE));
    }

    @Test
    void anItemAsksTheSameRule() {
        Item item = new Item("locks/a", "{}", 7, 7, 2_000, null);
        for (long t = 1_998; t <= 2_002; t++) {
            assertTrue(item.expiredAt(t) == Expiry.expired(2_000, t), "at " + t);
        }
    }
}
