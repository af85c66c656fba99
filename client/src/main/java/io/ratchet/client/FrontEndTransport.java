package io.ratchet.client;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Refusal;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ConnectivityState;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;

/**
 * The connections to the nodes' front ends: one gRPC channel per node address, opened on first use,
 * and the client's idea of which node leads. One call goes to one node and ends in an {@link Outcome}:
 * an answer, a typed refusal, or no answer. Retrying is the caller's business ({@link Attempts}).
 */
final class FrontEndTransport implements AutoCloseable {
    /** Answers carry items of up to 2 MiB each, many to a list page; the same bound Ratis gives its server. */
    private static final int MAX_ANSWER_BYTES = 64 << 20;

    /** What one call to one node came to. */
    sealed interface Outcome {
    }

    /** The node carried it out: its results message. */
    record Answered(byte[] results) implements Outcome {
    }

    /** The node did not carry it out, and says why; nothing was written. */
    record Refused(Refusal refusal) implements Outcome {
    }

    /**
     * No answer. {@code delivered} is false only when the request certainly never reached the node
     * (the connection could not be made); otherwise a write may have been applied.
     */
    record Unanswered(String why, boolean delivered) implements Outcome {
    }

    private final Map<String, ManagedChannel> channels = new LinkedHashMap<>();
    private final List<String> addresses;
    private volatile String leader;
    private volatile boolean closed;

    FrontEndTransport(List<String> addresses) {
        this.addresses = new ArrayList<>(addresses);
        this.leader = addresses.get(0);
    }

    /** The node believed to lead: where writes and linearizable reads go first. */
    String leader() {
        return leader;
    }

    /** After a node failed to serve: the next one in the list, so an outage is not retried in place. */
    void skip(String failed) {
        synchronized (addresses) {
            if (leader.equals(failed)) {
                leader = addresses.get((addresses.indexOf(failed) + 1) % addresses.size());
            }
        }
    }

    /** A node said who leads; a leader at an address the client was not given is added. */
    void follow(String address) {
        synchronized (addresses) {
            if (!addresses.contains(address)) {
                addresses.add(address);
            }
            leader = address;
        }
    }

    List<String> addresses() {
        synchronized (addresses) {
            return List.copyOf(addresses);
        }
    }

    /** Sends one message to the node at {@code address}; never completes exceptionally. */
    CompletableFuture<Outcome> call(MethodDescriptor<byte[], byte[]> method, String address, byte[] message,
                                    Duration timeout) {
        CompletableFuture<Outcome> outcome = new CompletableFuture<>();
        ManagedChannel channel;
        try {
            channel = channel(address);
        } catch (RuntimeException e) {
            outcome.complete(new Unanswered(e.getMessage(), false));
            return outcome;
        }
        if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
            // gRPC waits out a growing reconnect backoff (up to 2 min) after failed connections and fails
            // calls at once meanwhile, so a node that came back would stay unused that long. Our own
            // pauses between attempts already bound how often we try.
            channel.resetConnectBackoff();
        }
        ClientCalls.asyncUnaryCall(
                channel.newCall(method, CallOptions.DEFAULT.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)),
                message, new StreamObserver<>() {
                    @Override
                    public void onNext(byte[] answer) {
                        outcome.complete(decode(answer));
                    }

                    @Override
                    public void onError(Throwable t) {
                        outcome.complete(unanswered(t));
                    }

                    @Override
                    public void onCompleted() {
                        outcome.complete(new Unanswered("the node closed the call without an answer", true));
                    }
                });
        return outcome;
    }

    private static Outcome decode(byte[] answer) {
        try {
            return Codec.isRefusal(answer) ? new Refused(Codec.decodeRefusal(answer)) : new Answered(answer);
        } catch (RuntimeException e) {
            return new Unanswered("the answer does not parse: " + e.getMessage(), true);
        }
    }

    private static Outcome unanswered(Throwable t) {
        Status status = Status.fromThrowable(t);
        boolean refused = status.getCode() == Status.Code.UNAVAILABLE && rootCause(t) instanceof ConnectException;
        String why = status.getCode() == Status.Code.DEADLINE_EXCEEDED ? "timed out"
                : status.getCode() + (status.getDescription() == null ? "" : ": " + status.getDescription());
        return new Unanswered(why, !refused);
    }

    private static Throwable rootCause(Throwable t) {
        Throwable c = t instanceof StatusRuntimeException s && s.getCause() != null ? s.getCause() : t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c;
    }

    private ManagedChannel channel(String address) {
        synchronized (channels) {
            if (closed) {
                throw new IllegalStateException("the client is closed");
            }
            return channels.computeIfAbsent(address, a -> NettyChannelBuilder
                    .forAddress(a.substring(0, a.lastIndexOf(':')), Integer.parseInt(a.substring(a.lastIndexOf(':') + 1)))
                    .usePlaintext()
                    .maxInboundMessageSize(MAX_ANSWER_BYTES)
                    .build());
        }
    }

    boolean closed() {
        return closed;
    }

    @Override
    public void close() {
        List<ManagedChannel> open;
        synchronized (channels) {
            closed = true;
            open = new ArrayList<>(channels.values());
            channels.clear();
        }
        open.forEach(ManagedChannel::shutdownNow);
        for (ManagedChannel c : open) {
            try {
                c.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
