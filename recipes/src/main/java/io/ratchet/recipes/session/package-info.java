/**
 * Document sessions with Atomic Guards and the optimistic-concurrency retry loop, built only on the
 * client's public primitives (reads and one transaction per save).
 *
 * <p>{@link io.ratchet.recipes.session.ClusterSession} records a unit of work and saves it as one
 * transaction conditioned on what it read; {@link io.ratchet.recipes.session.Retry} re-runs a unit of
 * work from fresh reads when its save is refused, with bounded attempts and jittered backoff, and
 * offers a read-modify-write {@code update} of one item, whose concurrent calls from one client combine
 * into one put per round. Every loop reports its steps as {@link io.ratchet.recipes.session.RetryEvent}s
 * (a listener, the debug log, and the trail its exceptions carry).
 */
package io.ratchet.recipes.session;
