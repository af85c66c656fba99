package io.ratchet.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ItemTest {
    @Test
    void anItemWithoutExpiryNeverExpires() {
        Item item = new Item("k", "1", 5, 5, 0, null);
        assertEquals(Optional.empty(), item.expiry());
        assertFalse(item.expiredAt(Long.MAX_VALUE));
    }

    @Test
    void anItemExpiresAtItsClusterTimeNotBefore() {
        Item item = new Item("k", "1", 5, 5, 2_000, null);
        assertEquals(Optional.of(Instant.ofEpochMilli(2_000)), item.expiry());
        assertFalse(item.expiredAt(1_999));
        assertTrue(item.expiredAt(2_000));
    }
}
