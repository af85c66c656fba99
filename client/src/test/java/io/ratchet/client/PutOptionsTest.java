package io.ratchet.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Command;
import io.ratchet.protocol.Expiry;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.JsonText;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The typed write options turn into exactly the protocol's put, and refuse what cannot go together. */
class PutOptionsTest {
    @Test
    void noOptionsIsAPlainPut() {
        Command.Put put = PutOptions.none().toCommand("k", "1", 7);
        assertEquals(new Command.Put("k", "1", 7, null, 0, false), put);
    }

    @Test
    void aTtlAndExpiredCountsAsAbsentAreCarriedAsTheProtocolHasThem() {
        Command.Put put = PutOptions.none().ttl(Duration.ofSeconds(30)).expiredCountsAsAbsent().toCommand("locks/a", "{}", 0);
        assertEquals(30_000, put.ttlMillis());
        assertTrue(put.expiredIsAbsent());
        assertNull(put.metadata());
    }

    @Test
    void anExpiryInstantIsWrittenIntoTheMetadataBesideItsOtherFields() {
        Instant at = Instant.parse("2030-01-01T00:00:00Z");
        Command.Put put = PutOptions.none().metadata(Map.of("owner", "ada")).expiresAt(at).toCommand("k", "1", 0);
        assertEquals(at.toEpochMilli(), Expiry.fromMetadata(put.metadata()));
        assertTrue(put.metadata().contains("\"owner\":\"ada\""), put.metadata());
        assertEquals(0, put.ttlMillis());
    }

    @Test
    void metadataGivenAsJsonTextIsTakenAsItIs() {
        Command.Put put = PutOptions.none().metadata(JsonText.of("{\"a\":[1,2]}")).toCommand("k", "1", 0);
        assertEquals("{\"a\":[1,2]}", put.metadata());
        assertFalse(put.expiredIsAbsent());
    }

    @Test
    void optionsThatCannotGoTogetherAreRefusedBeforeAnythingIsSent() {
        Instant at = Instant.parse("2030-01-01T00:00:00Z");
        assertThrows(InvalidCommandException.class,
                () -> PutOptions.none().ttl(Duration.ofSeconds(1)).expiresAt(at).toCommand("k", "1", 0));
        assertThrows(InvalidCommandException.class,
                () -> PutOptions.none().metadata(Map.of(Expiry.FIELD, "2031-01-01T00:00:00Z")).expiresAt(at).toCommand("k", "1", 0));
        assertThrows(InvalidCommandException.class, () -> PutOptions.none().ttl(Duration.ZERO).toCommand("k", "1", 0));
        assertThrows(InvalidCommandException.class, () -> PutOptions.none().ttl(Duration.ofSeconds(-1)).toCommand("k", "1", 0));
        assertThrows(InvalidCommandException.class,
                () -> PutOptions.none().metadata("not an object").expiresAt(at).toCommand("k", "1", 0));
    }
}
