package io.ratchet.client;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Client-side group commit: the write requests that queue up while earlier ones are in flight travel
 * together as one message, so one Raft log entry (one replication round, one fsync on each node)
 * carries many of them. A lone request is sent at once ("natural batching": nothing waits for a timer).
 *
 * <p>Guarantees: requests are sent in the order {@link #submit} was called (in order within a
 * message, messages in order through Ratis' ordered stream), so they apply in that order; each
 * request gets exactly its own commands' results; when a message fails, every request in it fails
 * with that same error, as it would have alone. What the caller owes: submit only requests that
 * passed {@link Request#validate()}, so that a node never refuses a whole message for one bad member.
 */
final class GroupCommit {
    /** Sends one requests message; completes with every command's result in order, or fails as the client maps it. */
    @FunctionalInterface
    interface Transport {
        CompletableFuture<List<Result>> send(byte[] requestsMessage);
    }

    /**
     * Messages in flight at once. One keeps batches largest; a second lets the next batch start its
     * way through the leader while the first is being replicated, which pays on a loaded machine
     * (measured with scripts/bench, see docs/PERFORMANCE.md).
     */
    static final int DEFAULT_MESSAGES_IN_FLIGHT = Integer.getInteger("ratchet.groupCommit.inFlight", 2);

    private final Transport transport;
    private final int messagesInFlight;
    private final Object lock = new Object();
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private int inFlight;

    GroupCommit(Transport transport, int messagesInFlight) {
        if (messagesInFlight < 1) {
            throw new IllegalArgumentException("at least one message must be allowed in flight");
        }
        this.transport = transport;
        this.messagesInFlight = messagesInFlight;
    }

    /**
     * Queues a validated request and sends it as soon as a message slot is free, together with
     * whatever else is queued by then. Completes with its commands' results in order.
     */
    CompletableFuture<List<Result>> submit(Request validated) {
        byte[] encoded = Codec.encodeRequest(validated);
        if (encoded.length + Codec.REQUESTS_FRAMING_BYTES > Limits.MAX_REQUEST_BYTES) {
            // The node refuses such a message whole; refusing it here keeps it out of anyone's batch.
            return CompletableFuture.failedFuture(new InvalidRequestException("request is "
                    + (encoded.length + Codec.REQUESTS_FRAMING_BYTES) + " bytes; the limit is " + Limits.MAX_REQUEST_BYTES, null));
        }
        Pending pending = new Pending(encoded, validated.commands().size(), new CompletableFuture<>());
        Launch launch = null;
        synchronized (lock) {
            queue.add(pending);
            if (inFlight < messagesInFlight) {
                launch = launchLocked();
            }
        }
        if (launch != null) {
            watch(launch);
        }
        return pending.result;
    }

    /**
     * Takes the head of the queue, up to the byte and command bounds, and hands it to the transport.
     * The send happens under the lock so that messages enter Ratis' ordered stream in queue order.
     */
    private Launch launchLocked() {
        List<Pending> batch = new ArrayList<>();
        int bytes = Codec.REQUESTS_FRAMING_BYTES;
        int commands = 0;
        while (!queue.isEmpty()) {
            Pending next = queue.peek();
            if (!batch.isEmpty() && (bytes + next.encoded.length > Limits.MAX_REQUEST_BYTES
                    || commands + next.commands > Limits.MAX_COMMANDS_PER_REQUEST)) {
                break;
            }
            batch.add(queue.poll());
            bytes += next.encoded.length;
            commands += next.commands;
        }
        List<byte[]> encoded = new ArrayList<>(batch.size());
        batch.forEach(p -> encoded.add(p.encoded));
        inFlight++;
        CompletableFuture<List<Result>> sent;
        try {
            sent = transport.send(Codec.joinRequests(encoded));
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        return new Launch(batch, sent);
    }

    /** Frees the slot, sends what queued meanwhile, then hands each request its own results. */
    private void finished(List<Pending> batch, List<Result> results, Throwable error) {
        Launch next = null;
        synchronized (lock) {
            inFlight--;
            if (!queue.isEmpty()) {
                next = launchLocked();
            }
        }
        if (next != null) {
            watch(next);
        }
        int expected = batch.stream().mapToInt(p -> p.commands).sum();
        if (error == null && results.size() != expected) {
            error = new IllegalStateException("the node answered " + results.size() + " results for "
                    + expected + " commands");
        }
        if (error != null) {
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            batch.forEach(p -> p.result.completeExceptionally(cause));
            return;
        }
        int at = 0;
        for (Pending p : batch) {
            p.result.complete(List.copyOf(results.subList(at, at + p.commands)));
            at += p.commands;
        }
    }

    private record Pending(byte[] encoded, int commands, CompletableFuture<List<Result>> result) {
    }

    /** A message handed to the transport, and the requests it carries. */
    private record Launch(List<Pending> batch, CompletableFuture<List<Result>> sent) {
    }

    /** Called outside the lock: a future that is complete already runs the callback here and now. */
    private void watch(Launch launch) {
        launch.sent().whenComplete((results, error) -> finished(launch.batch(), results, error));
    }
}
