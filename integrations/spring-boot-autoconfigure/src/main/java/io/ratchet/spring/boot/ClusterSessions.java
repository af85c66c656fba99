package io.ratchet.spring.boot;

import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.session.ClusterSession;
import io.ratchet.recipes.session.Retry;
import io.ratchet.recipes.session.SessionOptions;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Opens {@link ClusterSession}s over the application's client: one unit of work over documents and items,
 * saved as one transaction with Atomic Guards. A session is used by one thread for one unit of work;
 * this factory is shared.
 *
 * <p>{@link #run} and {@link #call} run the unit in a fresh session and save it, and on a concurrency
 * conflict run it again from fresh reads (bounded, backed off with jitter), never replaying old writes.
 */
public final class ClusterSessions {
    private final RatchetClient client;
    private final SessionOptions options;

    public ClusterSessions(RatchetClient client, SessionOptions options) {
        this.client = client;
        this.options = options;
    }

    /** A new session; call {@link ClusterSession#saveChanges()} to commit it. */
    public ClusterSession open() {
        return ClusterSession.open(client, options);
    }

    /** Runs {@code unit} in a new session and saves it, re-running it on a conflict up to {@code maxAttempts} times. */
    public long run(int maxAttempts, Consumer<ClusterSession> unit) {
        return retry().run(maxAttempts, unit);
    }

    /** As {@link #run}, returning what the unit returned from the attempt that saved. */
    public <T> T call(int maxAttempts, Function<ClusterSession, T> unit) {
        return retry().call(maxAttempts, unit);
    }

    /** The retry loop itself, to set its back-off, listener or idempotent saves. */
    public Retry retry() {
        return Retry.of(client).withSessionOptions(options);
    }
}
