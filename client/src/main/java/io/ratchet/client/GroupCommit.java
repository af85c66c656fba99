package io.ratchet.client;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * Client-side group commit: the requests that queue up while earlier ones are in flight travel
 * together as one message, so one Raft log entry (one replication round, one fsync on each node)
 * carries many writes, and one ReadIndex round serves many gets. A lone request is sent at once
 * ("natural batching": nothing waits for a timer).
 *
 * <p>Guarantees: requests are sent in the order {@link #submit} was called (in order within a
 * message, messages in order through Ratis' ordered stream), so writes apply in that order; each
 * request gets exactly its own results; when a message fails, every request in it fails with that
 * same error, as it would have alone. What the caller owes: submit only requests that passed their
 * {@code validate()}, so that a node never refuses a whole message for one bad member.
 *
 * @param <T> what is batched: a write {@link Request} or a {@link Query.Get}
 */
final class GroupCommit<T> {
    /** Sends one message; completes with every result in order, or fails as the client maps it. */
    @FunctionalInterface
    interface Transport {
        CompletableFuture<List<Result>> send(byte[] message);
    }

    /** How members are encoded, joined into a message, and bounded. */
    record Format<T>(Function<T, byte[]> encode, Function<List<byte[]>, byte[]> join, ToIntFunction<T> results,
                     int framingBytes, int maxResults) {
    }

    /** Write requests: one requests message, one log entry. */
    static final Format<Request> WRITES = new Format<>(Codec::encodeRequest, Codec::joinRequests,
            r -> r.commands().size(), Codec.REQUESTS_FRAMING_BYTES, Limits.MAX_COMMANDS_PER_REQUEST);

    /** Linearizable gets: one {@link Query.Gets} message, one ReadIndex. */
    static final Format<Query.Get> GETS = new Format<>(Codec::encodeGet, Codec::joinGets, g -> 1,
            Codec.GETS_FRAMING_BYTES, Query.Gets.MAX_GETS);

    /**
     * Messages in flight at once. One keeps each batch as large as the queue allows, and measured best
     * with 16 clients on a 2-core machine (1,483 against 746 writes/s with two, 432 without batching:
     * docs/PERFORMANCE.md). The system property {@code ratchet.groupCommit.inFlight} overrides it for
     * measurements; a large value turns batching off.
     */
    static final int DEFAULT_MESSAGES_IN_FLIGHT = Integer.getInteger("ratchet.groupCommit.inFlight", 1);

    private final Format<T> format;
    private final Transport transport;
    private final int messagesInFlight;
    private final Object lock = new Object();
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private int inFlight;
    /** Whether some thread holds the sender's role: only it takes batches off the queue and sends them. */
    private boolean sending;

    GroupCommit(Format<T> format, Transport transport, int messagesInFlight) {
        if (messagesInFlight < 1) {
            throw new IllegalArgumentException("at least one message must be allowed in flight");
        }
        this.format = format;
        this.transport = transport;
        this.messagesInFlight = messagesInFlight;
    }

    /**
     * Queues a validated request and sends it as soon as a message slot is free, together with
     * whatever else is queued by then. Completes with its commands' results in order.
     */
    CompletableFuture<List<Result>> submit(T validated) {
        byte[] encoded = format.encode().apply(validated);
        if (encoded.length + format.framingBytes() > Limits.MAX_REQUEST_BYTES) {
            // The node refuses such a message whole; refusing it here keeps it out of anyone's batch.
            return CompletableFuture.failedFuture(new InvalidRequestException("request is "
                    + (encoded.length + format.framingBytes()) + " bytes; the limit is " + Limits.MAX_REQUEST_BYTES, null));
        }
        Pending pending = new Pending(encoded, format.results().applyAsInt(validated), new CompletableFuture<>());
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
                sent = transport.send(format.join().apply(encoded));
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
        int bytes = format.framingBytes();
        int commands = 0;
        while (!queue.isEmpty()) {
            Pending next = queue.peek();
            if (!batch.isEmpty() && (bytes + next.encoded.length > Limits.MAX_REQUEST_BYTES
                    || commands + next.commands > format.maxResults())) {
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
