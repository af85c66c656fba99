package io.ratchet.recipes.reservation;

/**
 * The outcome of a reservation. {@code reserved} is true when the key is now held by the owner that
 * asked, whether this call created the reservation or an earlier one did (so a retry after an unknown
 * outcome learns whether the first attempt landed). {@code current} is the reservation in force:
 * the caller's when reserved, the other owner's when not.
 */
public record ReservationResult(boolean reserved, Reservation current) {
}
