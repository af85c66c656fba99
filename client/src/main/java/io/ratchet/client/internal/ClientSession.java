package io.ratchet.client.internal;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.RatchetException;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.common.Failures;
import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.Rpc;
import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * This client's session with the cluster (Raft dissertation §6.3): what makes every write apply at most
 * once, however often it is resent and through whichever node.
 *
 * <p>The session is opened (one log entry) before the first write, under an id drawn at random here,
 * so a resent open names the same session. Each write message then carries the session id and the next
 * sequence number, and is resent unchanged until a node answers; the state machine applies a sequence
 * number once and answers resends with the first outcome. Messages go one at a time (the client's
 * group commit keeps one in flight), which is what lets the state machine tell a resend from a new
 * message by its number alone.
 *
 * <p>A session the cluster expired (idle past its timeout of cluster time) answers "expired" and
 * applies nothing. If this message was never delivered before, that answer is certain, and it is sent
 * again in a new session; if an earlier attempt may have reached the log before the session expired,
 * nobody can know whether it applied: {@link UnknownOutcomeException}.
 */
public final class ClientSession {
    /** Made on first use: a client that only reads (a command line {@code get}) never pays for seeding it. */
    private static final class Ids {
        static final SecureRandom RANDOM = new SecureRandom();
    }

    private final Attempts attempts;
    private final ClientOptions options;
    /** 0 until a session is open. Only the sender (one message at a time) reads and changes these. */
    private long id;
    private long nextSequence = 1;

    public ClientSession(Attempts attempts, ClientOptions options) {
        this.attempts = attempts;
        this.options = options;
    }

    /** Sends one requests message exactly once; completes with its results, one per command. */
    public CompletableFuture<List<Result>> send(byte[] requestsMessage) {
        return send(requestsMessage, true);
    }

    private CompletableFuture<List<Result>> send(byte[] requestsMessage, boolean mayReopen) {
        return open().thenCompose(session -> {
            long sequence = nextSequence++;
            byte[] message = Codec.tagRequests(session, sequence, requestsMessage);
            return attempts.send(Rpc.WRITE_CALL, message, options.operationTimeout(), options.requestTimeout())
                    .handle((delivery, error) -> {
                        if (error != null) {
                            return CompletableFuture.<List<Result>>failedFuture(writeError(error));
                        }
                        List<Result> results = Codec.decodeResults(delivery.results());
                        if (!results.isEmpty() && results.get(0) instanceof Result.SessionExpired) {
                            expired(session);
                            if (delivery.earlierMayHaveApplied() || !mayReopen) {
                                return CompletableFuture.<List<Result>>failedFuture(new UnknownOutcomeException(
                                        "the write was resent after its session " + Long.toHexString(session)
                                                + " expired; it may or may not have been applied", null));
                            }
                            return send(requestsMessage, false);
                        }
                        return CompletableFuture.completedFuture(results);
                    })
                    .thenCompose(f -> f);
        });
    }

    /** The open session's id, opening one first if there is none. */
    private CompletableFuture<Long> open() {
        if (id != 0) {
            return CompletableFuture.completedFuture(id);
        }
        long candidate;
        do {
            candidate = Ids.RANDOM.nextLong();
        } while (candidate == 0);
        Command.OpenSession open = new Command.OpenSession(candidate, options.sessionTimeout().toMillis());
        byte[] message = Codec.encodeBatches(List.of(Batch.untagged(List.of(Request.of(List.of(open))))));
        return attempts.send(Rpc.WRITE_CALL, message, options.operationTimeout(), options.requestTimeout())
                .handle((delivery, error) -> {
                    if (error != null) {
                        // Nothing of the caller's was sent: whatever happened to the open, the write did not apply.
                        throw unavailable(error);
                    }
                    Result result = Codec.decodeResults(delivery.results()).get(0);
                    if (!(result instanceof Result.SessionOpened opened)) {
                        throw new IllegalStateException("a session open was answered with " + result);
                    }
                    id = opened.session();
                    nextSequence = 1;
                    attempts.events().sessionOpen();
                    return id;
                });
    }

    private void expired(long session) {
        if (id == session) {
            id = 0;
        }
    }

    private static RatchetException writeError(Throwable error) {
        Throwable cause = Failures.unwrap(error);
        if (cause instanceof RatchetException r) {
            return r;
        }
        if (cause instanceof Attempts.GaveUp g) {
            if (g.mayHaveApplied) {
                return new UnknownOutcomeException("the write got no answer in " + g.spentMillis
                        + " ms; it may or may not have been applied (" + g.getMessage() + ")", g);
            }
            return new ClusterUnavailableException("the write was not accepted in " + g.spentMillis
                    + " ms, and was not applied (" + g.getMessage() + ")", g);
        }
        return new UnknownOutcomeException("the write failed: " + cause, cause);
    }

    private static RatchetException unavailable(Throwable error) {
        Throwable cause = Failures.unwrap(error);
        if (cause instanceof RatchetException r) {
            return r;
        }
        return new ClusterUnavailableException("no session could be opened; the write was not sent ("
                + cause.getMessage() + ")", cause);
    }
}
