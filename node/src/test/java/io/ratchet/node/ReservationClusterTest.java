package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.recipes.reservation.Reservation;
import io.ratchet.recipes.reservation.ReservationResult;
import io.ratchet.recipes.reservation.Reservations;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Result;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Unique reservations, alone and together with the document that owns them, on a real cluster. */
class ReservationClusterTest extends SharedClusterTest {

    record User(String name, String email) {
    }

    @Test
    void anEmailIsReservedOnceARetryBySameOwnerIsToldItHoldsItAndReleaseFreesIt() {
        Reservations reservations = new Reservations(cluster.client());
        ReservationResult ada = reservations.reserve("emails/ada@example.com", "users/1");
        assertTrue(ada.reserved());
        assertEquals("users/1", ada.current().owner());

        ReservationResult rival = reservations.reserve("EMAILS/Ada@Example.com", "users/2");
        assertFalse(rival.reserved(), "keys compare case-insensitively");
        assertEquals(ada.current(), rival.current(), "the refusal says who holds it");

        ReservationResult retry = reservations.reserve("emails/ada@example.com", "users/1");
        assertTrue(retry.reserved(), "a retry after an unknown outcome learns the first attempt landed");
        assertEquals(ada.current().index(), retry.current().index(), "and writes nothing");

        Reservation stale = new Reservation(ada.current().key(), "users/1", ada.current().index() + 1_000, ada.current().expiresAt());
        assertFalse(reservations.release(stale));
        assertTrue(reservations.release(ada.current()));
        assertTrue(reservations.reserve("emails/ada@example.com", "users/2").reserved(), "released, it is free again");
    }

    @Test
    void aReservationWithATtlLapsesOnClusterTimeAndThenAnotherOwnerGetsIt() {
        Reservations reservations = new Reservations(cluster.client());
        Duration ttl = Duration.ofSeconds(1);
        ReservationResult brief = reservations.reserve("usernames/ada", "users/1", ttl);
        assertTrue(brief.reserved());
        assertTrue(brief.current().expiresAt().isPresent());

        AtomicReference<ReservationResult> second = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200)).until(() -> {
            second.set(reservations.reserve("usernames/ada", "users/2", ttl));
            return second.get().reserved();
        });
        assertFalse(second.get().current().expiresAt().orElseThrow().minus(ttl).isBefore(brief.current().expiresAt().orElseThrow()),
                "taken over only once the first reservation lapsed, on cluster time");
        assertThrows(InvalidRequestException.class, () -> reservations.reserve("usernames/x", "users/3", Duration.ZERO));
        assertThrows(InvalidRequestException.class, () -> reservations.reserve("usernames/x", ""));
        assertTrue(cluster.client().get("usernames/x").isEmpty());
    }

    @Test
    void reservingAnEmailWithTheUserDocumentWritesBothOrNeither() {
        RatchetClient client = cluster.client();
        Reservations reservations = new Reservations(client);
        TransactionResult grace = reservations.reserveWithDocument("emails/grace@example.com", "users/grace",
                new User("Grace", "grace@example.com"));
        assertTrue(grace.successful());
        Item reservation = client.get("emails/grace@example.com").orElseThrow();
        assertEquals("\"users/grace\"", reservation.value());
        assertEquals(grace.index(), reservation.index());
        Document document = client.getDocument("users/grace").orElseThrow();
        assertEquals(grace.index(), document.index(), "the document and its guard land in the same entry");

        // A second user signs up with the same email: neither the reservation nor the document is written.
        TransactionResult impostor = reservations.reserveWithDocument("emails/grace@example.com", "users/impostor",
                new User("Impostor", "grace@example.com"));
        assertFalse(impostor.successful());
        assertEquals(List.of(new Result.Conflict("emails/grace@example.com", 0, grace.index())), impostor.conflicts());
        assertTrue(client.getDocument("users/impostor").isEmpty(), "no document without its email");
        assertTrue(client.get(Document.guardKey("users/impostor")).isEmpty(), "and no guard");

        // The existing user id with a second email: the new email is not left reserved.
        TransactionResult again = reservations.reserveWithDocument("emails/grace.hopper@example.com", "users/grace",
                new User("Grace Hopper", "grace.hopper@example.com"));
        assertFalse(again.successful());
        assertEquals(List.of(new Result.Conflict(Document.guardKey("users/grace"), 0, grace.index())), again.conflicts());
        assertTrue(client.get("emails/grace.hopper@example.com").isEmpty(), "no stray reservation");
        assertEquals(document, client.getDocument("users/grace").orElseThrow(), "the user is as it was");
        assertEquals(reservation, client.get("emails/grace@example.com").orElseThrow());

        assertThrows(InvalidRequestException.class,
                () -> reservations.reserveWithDocument("emails/x@example.com", "users/x", "not an object"));
        assertTrue(client.get("emails/x@example.com").isEmpty());
    }
}
