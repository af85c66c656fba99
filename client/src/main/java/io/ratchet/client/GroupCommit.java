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
     * Messages in flight at once. One keeps each batch as large as the queue allows, and measured best
     * with 16 clients on a 2-core machine (1,483 against 746 writes/s with two, 432 without batching:
     * docs/PERFORMANCE.md). The system property {@code ratchet.groupCommit.inFlight} overrides it for
     * measurements; a large value turns batching off.
     */
    static final int DEFAULT_MESSAGES_IN_FLIGHT = Integer.getInteger("ratchet.groupCommit.inFlight", 1);

    private final Transport transport;
    private final int messagesInFlight;
    private final Object lock = new Object();
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private int inFlight;
    /** Whether some thread holds the sender's role: only it takes batches off the queue and sends them. */
    private boolean sending;

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
        synchronized (lock) {
            queue.add(pending);
            if (!claimSenderRole()) {
                return pending.result;
            }
        }
        sendWhatIsQueued();
        return pending.result;
    }

    /** Under the lock: takes the sender's role if nobody has it and there is a free slot and work. */
    private boolean claimSenderRole() {
        if (sending || inFlight >= messagesInFlight || queue.isEmpty()) {
            return false;
        }
        sending = true;
        return true;
    }

    /**
     * Run by the sender alone: takes batches off the head of the queue while slots are free, and
     * hands each to the transport in queue order, so messages enter Ratis' ordered stream in that
     * order. Our lock is never held while Ratis runs: Ratis completes replies under its own lock,
     * and a reply's callback takes ours, so holding ours into Ratis could deadlock.
     */
    private void sendWhatIsQueued() {
        while (true) {
            List<Pending> batch;
            synchronized (lock) {
                if (queue.isEmpty() || inFlight >= messagesInFlight) {
                    sending = false;
                    return;
                }
                batch = takeBatch();
                inFlight++;
            }
            List<byte[]> encoded = new ArrayList<>(batch.size());
            batch.forEach(p -> encoded.add(p.encoded));
            CompletableFuture<List<Result>> sent;
            try {
                sent = transport.send(Codec.joinRequests(encoded));
            } catch (RuntimeException e) {
                sent = CompletableFuture.failedFuture(e);
            }
            // If it is complete already, finished() runs here; it sees the role taken and leaves the queue to this loop.
            sent.whenComplete((results, error) -> finished(batch, results, error));
        }
    }

    /** Under the lock: the head of the queue, up to the byte and command bounds (at least one request). */
    private List<Pending> takeBatch() {
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
        return batch;
    }

    /** Frees the slot, sends what queued meanwhile, then hands each request its own results. */
    private void finished(List<Pending> batch, List<Result> results, Throwable error) {
        boolean sender;
        synchronized (lock) {
            inFlight--;
            sender = claimSenderRole();
        }
        if (sender) {
            sendWhatIsQueued();
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
}
