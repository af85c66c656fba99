package io.ratchet.examples.signup;

/** A user document, stored under {@code users/<id>} with its Atomic Guard. */
public record User(String id, String email, String name) {
}
