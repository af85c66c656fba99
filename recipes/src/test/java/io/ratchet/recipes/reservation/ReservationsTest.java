package io.ratchet.recipes.reservation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.TransactionResult;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Result;
import io.ratchet.recipes.OnInProcessCluster;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Reservations against {@link InProcessCluster}: the real store, time-to-lives on the manual cluster clock. */
@Timeout(10)
class ReservationsTest extends OnInProcessCluster {
    private static final String EMAIL = "emails/ada@example.com";

    private Reservations reservations;

    @BeforeEach
    void start() {
        reservations = new Reservations(client);
    }

    @Test
    void aFreeKeyIsReservedForItsOwner() {
        ReservationResult r = reservations.reserve(EMAIL, "user-1");

        assertTrue(r.reserved());
        assertEquals(new Reservation(EMAIL, "user-1", cluster.lastIndex(), Optional.empty()), r.current());
        Item item = cluster.item(EMAIL).orElseThrow();
        assertEquals("\"user-1\"", item.value(), "the owner, as a JSON string");
        assertEquals(0, item.expiresAt());
    }

    @Test
    void aHeldKeyIsRefusedAndTheHolderIsNamed() {
        ReservationResult first = reservations.reserve(EMAIL, "user-1");

        ReservationResult second = new Reservations(cluster.client()).reserve(EMAIL, "user-2");

        assertFalse(second.reserved());
        assertEquals(first.current(), second.current(), "the reservation in force: user-1's");
        assertEquals("\"user-1\"", cluster.item(EMAIL).orElseThrow().value());
    }

    @Test
    void keysCompareCaseInsensitively() {
        ReservationResult first = reservations.reserve("Emails/Ada@Example.COM", "user-1");

        ReservationResult second = reservations.reserve("emails/ada@example.com", "user-2");

        assertFalse(second.reserved());
        assertEquals("Emails/Ada@Example.COM", second.current().key(), "the spelling it was first reserved with");
        assertEquals("user-1", second.current().owner());
        assertEquals(first.current().index(), second.current().index());
        assertEquals(1L, (long) cluster.read(s -> s.size()));
    }

    @Test
    void theSameOwnerReservingAgainIsToldItHoldsTheKeyAndNothingIsWritten() {
        ReservationResult first = reservations.reserve(EMAIL, "user-1");

        ReservationResult again = reservations.reserve(EMAIL, "user-1");

        assertTrue(again.reserved(), "a retry after an unknown outcome learns that the first attempt landed");
        assertEquals(first.current().index(), again.current().index());
        assertEquals(first.current().index(), cluster.item(EMAIL).orElseThrow().index());
    }

    @Test
    void releaseDeletesAtTheReservationsIndexAndAStaleReleaseChangesNothing() {
        ReservationResult first = reservations.reserve(EMAIL, "user-1");

        assertTrue(reservations.release(first.current()));
        assertTrue(cluster.item(EMAIL).isEmpty());
        assertFalse(reservations.release(first.current()), "already released");

        ReservationResult second = reservations.reserve(EMAIL, "user-2");
        assertTrue(second.reserved());
        assertTrue(second.current().index() > first.current().index());
        assertFalse(reservations.release(first.current()), "an old reservation cannot release the new one");
        assertEquals("\"user-2\"", cluster.item(EMAIL).orElseThrow().value());
    }

    @Test
    void aReservationWithATtlLapsesOnClusterTimeAndCountsAsAbsentBeforeItIsSwept() {
        ReservationResult first = reservations.reserve(EMAIL, "user-1", Duration.ofSeconds(30));
        assertEquals(Optional.of(Instant.ofEpochMilli(cluster.now() + 30_000)), first.current().expiresAt());

        cluster.advance(Duration.ofSeconds(29));
        assertFalse(reservations.reserve(EMAIL, "user-2").reserved(), "still held");

        cluster.advance(Duration.ofSeconds(1));
        ReservationResult taken = reservations.reserve(EMAIL, "user-2");

        assertTrue(taken.reserved(), "lapsed: it no longer blocks a new owner, swept or not");
        assertEquals("user-2", taken.current().owner());
        assertEquals(Optional.empty(), taken.current().expiresAt(), "a reservation without a ttl");
        assertFalse(reservations.release(first.current()));
        assertEquals("\"user-2\"", cluster.item(EMAIL).orElseThrow().value());
    }

    @Test
    void aReservationWhoseWriteGotNoAnswerIsLearnedByReservingAgain() {
        client.put("warm", 1, 0); // opens the session: what is lost below is the reservation
        cluster.dropAnswers(Integer.MAX_VALUE);

        CompletionException e = assertThrows(CompletionException.class,
                () -> reservations.reserveAsync(EMAIL, "user-1").join());
        assertInstanceOf(UnknownOutcomeException.class, e.getCause());

        cluster.dropAnswers(0);
        assertTrue(reservations.reserve(EMAIL, "user-1").reserved());
        assertFalse(reservations.reserve(EMAIL, "user-2").reserved());
    }

    // ---- a reservation and a document together

    @Test
    void aReservationAndItsDocumentAreWrittenTogether() {
        TransactionResult saved = reservations.reserveWithDocument(EMAIL, "users/1", Map.of("email", "ada@example.com"));

        assertTrue(saved.successful());
        Item reservation = cluster.item(EMAIL).orElseThrow();
        assertEquals("\"users/1\"", reservation.value(), "the reservation names the document");
        assertEquals(saved.index(), reservation.index());
        Document doc = client.getDocument("users/1").orElseThrow();
        assertEquals("{\"email\":\"ada@example.com\"}", doc.json());
        assertEquals(saved.index(), doc.index());
    }

    @Test
    void aTakenReservationLeavesNoDocumentBehind() {
        ReservationResult held = reservations.reserve(EMAIL, "user-9");

        TransactionResult refused = reservations.reserveWithDocument(EMAIL, "users/1", Map.of("name", "ada"));

        assertFalse(refused.successful());
        assertEquals(List.of(new Result.Conflict(EMAIL, 0, held.current().index())), refused.conflicts());
        assertEquals(Optional.empty(), client.getDocument("users/1"));
        assertTrue(cluster.item(Document.guardKey("users/1")).isEmpty());
    }

    @Test
    void anExistingDocumentLeavesNoReservationBehind() {
        TransactionResult first = reservations.reserveWithDocument("emails/first@example.com", "users/1", Map.of("n", 1));

        TransactionResult refused = reservations.reserveWithDocument(EMAIL, "users/1", Map.of("n", 2));

        assertFalse(refused.successful());
        assertEquals(List.of(new Result.Conflict(Document.guardKey("users/1"), 0, first.index())), refused.conflicts());
        assertTrue(cluster.item(EMAIL).isEmpty());
        assertEquals("{\"n\":1}", client.getDocument("users/1").orElseThrow().json());
    }

    // ---- bad input

    @Test
    void badInputIsRefusedBeforeAnythingIsSent() {
        Reservation someone = new Reservation(EMAIL, "user-1", 0, Optional.empty());

        assertInvalid(() -> reservations.reserveAsync(EMAIL, null));
        assertInvalid(() -> reservations.reserveAsync(EMAIL, ""));
        assertInvalid(() -> reservations.reserveAsync("", "user-1"));
        assertInvalid(() -> reservations.reserveAsync(null, "user-1"));
        assertInvalid(() -> reservations.reserveAsync("rvn-atomic/users/1", "user-1"));
        assertInvalid(() -> reservations.reserveAsync(EMAIL, "user-1", Duration.ZERO));
        assertInvalid(() -> reservations.reserveAsync(EMAIL, "user-1", Duration.ofSeconds(-1)));
        assertInvalid(() -> reservations.reserveAsync(EMAIL, "user-1", null));
        assertInvalid(() -> reservations.reserveAsync(EMAIL, "user-1", Duration.ofDays(400)));
        assertInvalid(() -> reservations.releaseAsync(null));
        assertInvalid(() -> reservations.releaseAsync(someone));
        assertInvalid(() -> reservations.reserveWithDocumentAsync(EMAIL, "", Map.of()));
        assertInvalid(() -> reservations.reserveWithDocumentAsync(EMAIL, null, Map.of()));
        assertInvalid(() -> reservations.reserveWithDocumentAsync(EMAIL, "users/1", null));
        assertInvalid(() -> reservations.reserveWithDocumentAsync(EMAIL, "users/1", "not an object"));
        assertInvalid(() -> reservations.reserveWithDocumentAsync("", "users/1", Map.of()));

        assertEquals(List.of(), cluster.calls(), "the connector saw no call");
    }

    private static void assertInvalid(Supplier<? extends CompletableFuture<?>> call) {
        CompletionException e = assertThrows(CompletionException.class, () -> call.get().join());
        assertInstanceOf(InvalidRequestException.class, e.getCause(), () -> "got " + e.getCause());
    }
}
