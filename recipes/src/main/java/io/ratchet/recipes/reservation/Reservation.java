package io.ratchet.recipes.reservation;

import java.time.Instant;
import java.util.Optional;

/**
 * A unique key held by an owner: an email address by a user id, say.
 *
 * @param key       the reserved key, as first written
 * @param owner     who holds it (the item's value, a JSON string; the raw JSON when it is not one)
 * @param index     the item's index: what {@link Reservations#release} is conditioned on
 * @param expiresAt when the reservation lapses, in cluster time; empty for never
 */
public record Reservation(String key, String owner, long index, Optional<Instant> expiresAt) {
}
