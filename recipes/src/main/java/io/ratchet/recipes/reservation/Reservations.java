package io.ratchet.recipes.reservation;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.PutOptions;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Unique reservations (an email address, a username) as create-only puts, built only from
 * {@link RatchetClient}'s public primitives. The item's value is the owner, as a JSON string.
 *
 * <p>Guarantee: of any number of concurrent reservations of one key (keys compare case-insensitively),
 * exactly one owner gets it; the others are told who holds it. A reservation with a time-to-live lapses
 * at cluster time and can then be taken by another owner (it counts as absent even before the sweeper
 * removes it). Such a reservation is not a lock: an answer delayed past its time-to-live can report
 * a reservation that has already lapsed; {@link io.ratchet.recipes.lock.Locks} gives late grants back,
 * this class does not.
 *
 * <p>What the caller owes: release a reservation it no longer needs; after an
 * {@link UnknownOutcomeException}, reserve again with the same owner to learn whether it landed.
 * Errors: {@link InvalidRequestException} for a bad key, owner, ttl or document (nothing written).
 */
public final class Reservations {
    private final RatchetClient client;

    public Reservations(RatchetClient client) {
        this.client = client;
    }

    /** Reserves {@code key} for {@code owner} for good (until released). */
    public CompletableFuture<ReservationResult> reserveAsync(String key, String owner) {
        return reserve(key, owner, 0);
    }

    /** Reserves {@code key} for {@code owner} until {@code ttl} after the write's cluster time. */
    public CompletableFuture<ReservationResult> reserveAsync(String key, String owner, Duration ttl) {
        if (ttl == null || ttl.toMillis() <= 0) {
            return CompletableFuture.failedFuture(invalid("a reservation's ttl must be at least 1 ms, not " + ttl));
        }
        return reserve(key, owner, ttl.toMillis());
    }

    private CompletableFuture<ReservationResult> reserve(String key, String owner, long ttlMillis) {
        if (owner == null || owner.isEmpty()) {
            return CompletableFuture.failedFuture(invalid("a reservation needs an owner"));
        }
        // An expired reservation counts as absent, so a lapsed one never blocks a new owner.
        PutOptions options = PutOptions.none().expiredCountsAsAbsent();
        return client.putAsync(key, owner, 0, ttlMillis == 0 ? options : options.ttl(Duration.ofMillis(ttlMillis)))
                .thenApply(r -> {
                    Reservation current = reservationOf(r.item());
                    return new ReservationResult(r.successful() || current.owner().equals(owner), current);
                });
    }

    /**
     * Releases a reservation: deletes its key at {@link Reservation#index()}. Completes with false, writing
     * nothing, when the key has moved on (released, lapsed, or reserved again by anyone).
     */
    public CompletableFuture<Boolean> releaseAsync(Reservation reservation) {
        if (reservation == null) {
            return CompletableFuture.failedFuture(invalid("no reservation given"));
        }
        return client.writeAsync(new Command.Delete(reservation.key(), reservation.index()))
                .thenApply(CompareExchangeResult::successful);
    }

    /**
     * Reserves {@code reservationKey} for {@code documentId} and creates that document, with its Atomic
     * Guard, in one transaction: both happen or neither does. So a user whose email is taken leaves no
     * document behind, and a user id that exists already leaves no stray reservation.
     *
     * @param document anything Jackson writes as a JSON object
     * @return on failure, the conflicts name the reservation key (taken) and/or the guard
     *         {@code rvn-atomic/<documentId>} (the document exists), each with its current index
     */
    public CompletableFuture<TransactionResult> reserveWithDocumentAsync(String reservationKey, String documentId,
                                                                         Object document) {
        if (documentId == null || documentId.isEmpty()) {
            return CompletableFuture.failedFuture(invalid("a document id must not be empty"));
        }
        if (document == null) {
            return CompletableFuture.failedFuture(invalid("document '" + documentId + "' must not be null"));
        }
        String json;
        try {
            json = Json.write(document);
        } catch (InvalidCommandException e) {
            return CompletableFuture.failedFuture(new InvalidRequestException(e.getMessage(), e));
        }
        return client.transactionAsync(List.of(
                new Command.Put(reservationKey, Json.write(documentId), 0, null, 0, true),
                new Command.PutDocument(documentId, json, 0)));
    }

    public ReservationResult reserve(String key, String owner) {
        return RatchetClient.await(reserveAsync(key, owner));
    }

    public ReservationResult reserve(String key, String owner, Duration ttl) {
        return RatchetClient.await(reserveAsync(key, owner, ttl));
    }

    public boolean release(Reservation reservation) {
        return RatchetClient.await(releaseAsync(reservation));
    }

    public TransactionResult reserveWithDocument(String reservationKey, String documentId, Object document) {
        return RatchetClient.await(reserveWithDocumentAsync(reservationKey, documentId, document));
    }

    private static Reservation reservationOf(Item item) {
        JsonNode value = item.valueNode();
        String owner = value.isTextual() ? value.asText() : item.value();
        return new Reservation(item.key(), owner, item.index(), item.expiry());
    }

    private static InvalidRequestException invalid(String message) {
        return new InvalidRequestException(message, null);
    }
}
