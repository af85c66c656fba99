package io.ratchet.recipes.lock;

import io.ratchet.client.ClientEvents;
import io.ratchet.client.RatchetClient;
import io.ratchet.common.Failures;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * What the lock recipes tell their client's {@link ClientEvents}: each acquire's wait and whether it got
 * the lock, and which grants are held, so that an application's meters show locks held and lock waits.
 * Reporting never changes an outcome.
 */
final class LockEvents {
    private LockEvents() {
    }

    /** Reports {@code acquire}'s end: started at {@code startNanos} (this process's {@link System#nanoTime()}). */
    static <G extends Grant> CompletableFuture<Optional<G>> acquire(RatchetClient client, String kind, String name,
                                                                   long startNanos, CompletableFuture<Optional<G>> acquire) {
        ClientEvents events = client.events();
        return acquire.whenComplete((grant, error) -> {
            long waited = System.nanoTime() - startNanos;
            if (grant != null && grant.isPresent()) {
                G g = grant.get();
                events.lockAcquire(kind, name, g.fencingToken(), startNanos, g.duration(), true, waited);
            } else {
                events.lockAcquire(kind, name, 0, startNanos, Duration.ZERO, false, waited);
            }
        });
    }

    /** Reports a renewal sent at {@code startNanos}: held for its new lease, or ended when it was found lost. */
    static <G extends Grant> CompletableFuture<G> renew(RatchetClient client, String kind, String name, long fencingToken,
                                                       long startNanos, CompletableFuture<G> renewal) {
        return renewal.whenComplete((grant, error) -> {
            if (grant != null) {
                client.events().lockRenewed(kind, name, grant.fencingToken(), startNanos, grant.duration());
            } else if (Failures.unwrap(error) instanceof LeaseLostException) {
                client.events().lockEnded(kind, name, fencingToken);
            }
            // Any other failure (no answer): the grant may still be held, and counts until its lease ends.
        });
    }

    /** Reports a release: the grant is no longer held whether it was released or found gone. */
    static CompletableFuture<Void> release(RatchetClient client, String kind, String name, long fencingToken,
                                           CompletableFuture<Void> release) {
        return release.whenComplete((done, error) -> client.events().lockEnded(kind, name, fencingToken));
    }
}
