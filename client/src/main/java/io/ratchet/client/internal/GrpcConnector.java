package io.ratchet.client.internal;

import io.ratchet.client.internal.Transport.Outcome;
import io.ratchet.client.internal.Transport.Unanswered;
import io.ratchet.common.Credentials;
import io.ratchet.common.Failures;
import io.ratchet.common.NodeChannels;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Rpc;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ConnectivityState;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.apache.ratis.thirdparty.io.netty.channel.EventLoopGroup;
import org.apache.ratis.thirdparty.io.netty.channel.nio.NioEventLoopGroup;
import org.apache.ratis.thirdparty.io.netty.channel.socket.nio.NioSocketChannel;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.NotSslRecordException;
import org.apache.ratis.thirdparty.io.netty.util.HashedWheelTimer;
import org.apache.ratis.thirdparty.io.netty.util.Timeout;

/**
 * The connections to the nodes' front ends: one gRPC channel and one {@code Calls} stream per node
 * address, opened on first use.
 */
public final class GrpcConnector implements Transport.Connector {
    /** Enough for one client's few channels; gRPC's shared default is two per core for a whole process. */
    private static final int NETWORK_THREADS = 2;

    private final Map<String, CallStream> streams = new LinkedHashMap<>();
    /** Calls' timeouts: on the process's deadline wheel, which this connector holds open until it closes. */
    private final HashedWheelTimer deadlines;
    private final Credentials credentials;
    /**
     * This client's own network threads, rather than gRPC's process-wide ones, so that {@link #close} ends
     * every thread the client started: a program that closes its client and returns from {@code main}
     * leaves nothing running. gRPC delivers answers on them too ({@code directExecutor}): an answer is
     * parsed and its call completed where it was read, with no hand-off to an executor's thread, which
     * cost a thread wake-up per answer. Nothing the client runs there blocks; the futures users get
     * complete on a thread of the client's own ({@code RatchetClient.handOff}).
     */
    private final EventLoopGroup network;
    private boolean closed;

    /**
     * @throws IllegalArgumentException when the credentials' TLS files cannot be read or used: they are
     *                                  read here, so a bad file fails at once rather than every call
     */
    public GrpcConnector(Credentials credentials) {
        NodeChannels.requireUsable(credentials);
        this.credentials = credentials;
        this.network = new NioEventLoopGroup(NETWORK_THREADS, DaemonThreads.named("ratchet-client-network"));
        this.deadlines = Deadlines.acquire();
    }

    @Override
    public CompletableFuture<Outcome> call(byte method, int group, String address, byte[] message, Duration timeout) {
        CallStream stream;
        try {
            stream = stream(address);
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(new Unanswered(e.getMessage(), false));
        }
        return stream.call(method, group, message, timeout);
    }

    /**
     * One node's {@code Calls} stream: every call this client makes to that node travels on it, framed
     * with an id, and answers come back in any order. When the stream fails, every call on it ends
     * unanswered and the next call opens a new one.
     */
    private final class CallStream {
        private final ManagedChannel channel;
        private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
        private final AtomicLong ids = new AtomicLong();
        /** The open stream, or null; replaced only under this object's lock. */
        private Stream current;

        /** A call waiting for its answer, and the stream it went out on. */
        private record Pending(CompletableFuture<Outcome> outcome, Timeout timeout, Stream stream) {
        }

        /**
         * One gRPC stream. This object receives its answers and exists before the stream starts, so a
         * failure delivered at once (a refused connection, on another thread) still names the stream it
         * ends. (Naming it by the request observer the start returns raced with that failure and left a
         * dead stream current: every later call to the node then waited out its timeout.)
         */
        private final class Stream implements StreamObserver<byte[]> {
            StreamObserver<byte[]> requests;
            /** Whether the node answered anything on it: then its connection was made. */
            volatile boolean answered;
            /** Why it ended, once it has: set before the calls on it are ended. */
            volatile Outcome ended;

            @Override
            public void onNext(byte[] frame) {
                answered = true;
                if (frame.length >= Long.BYTES) {
                    finish(ByteBuffer.wrap(frame).getLong(), Transport.outcomeOf(Arrays.copyOfRange(frame, Long.BYTES, frame.length)));
                }
            }

            @Override
            public void onError(Throwable t) {
                closed(this, unanswered(t, answered));
            }

            @Override
            public void onCompleted() {
                closed(this, new Unanswered("the node closed the stream", true));
            }
        }

        public CallStream(ManagedChannel channel) {
            this.channel = channel;
        }

        public CompletableFuture<Outcome> call(byte method, int group, byte[] message, Duration timeout) {
            long id = ids.incrementAndGet();
            CompletableFuture<Outcome> outcome = new CompletableFuture<>();
            byte[] frame = Rpc.frame(id, method, group, message);
            synchronized (this) {
                Stream stream = open();
                Timeout timer = Deadlines.after(deadlines, timeout, () -> finish(id, new Unanswered("timed out", true)));
                pending.put(id, new Pending(outcome, timer, stream));
                if (stream.ended != null) {
                    // gRPC runs its callbacks on the thread at hand: a connection refused at once ended the
                    // stream inside open(), before this call was pending on it.
                    finish(id, stream.ended);
                    return outcome;
                }
                try {
                    stream.requests.onNext(frame);
                } catch (RuntimeException e) {
                    current = null;
                    finish(id, new Unanswered("the stream failed: " + e.getMessage(), true));
                }
            }
            return outcome;
        }

        /** Under this object's lock: the open stream, or a new one. */
        private Stream open() {
            if (current == null) {
                if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
                    // gRPC waits out a growing reconnect backoff (up to 2 min) after failed connections
                    // and fails calls at once meanwhile, so a node that came back would stay unused that
                    // long. Our own pauses between attempts already bound how often we try.
                    channel.resetConnectBackoff();
                }
                Stream stream = new Stream();
                current = stream;
                stream.requests = ClientCalls.asyncBidiStreamingCall(channel.newCall(Rpc.CALLS, CallOptions.DEFAULT), stream);
                // Not current: a failure delivered during the start (on this thread) has cleared it already.
                return stream;
            }
            return current;
        }

        /** A stream ended: the calls that went out on it end unanswered, and the next call opens another. */
        private void closed(Stream stream, Outcome why) {
            stream.ended = why;
            synchronized (this) {
                if (current == stream) {
                    current = null;
                }
            }
            pending.forEach((id, p) -> {
                if (p.stream() == stream) {
                    finish(id, why);
                }
            });
        }

        private void finish(long id, Outcome outcome) {
            Pending p = pending.remove(id);
            if (p != null) {
                p.timeout().cancel();
                p.outcome().complete(outcome);
            }
        }

        public void close() {
            synchronized (this) {
                if (current != null) {
                    try {
                        current.requests.onCompleted();
                    } catch (RuntimeException e) {
                        // already failed
                    }
                    current = null;
                }
            }
            for (Long id : List.copyOf(pending.keySet())) {
                finish(id, new Unanswered("the client is closed", true));
            }
        }
    }


    /** @param answered whether the stream that failed had been answered before */
    private Outcome unanswered(Throwable t, boolean answered) {
        Status status = Status.fromThrowable(t);
        SSLException tls = tlsFailure(t, answered);
        if (tls != null) {
            // gRPC starts calls on a connection only once the node sent its HTTP/2 settings, which it does
            // only after its side of the handshake accepted this client: a call that failed there never left.
            return new Unanswered(TlsFailures.describe(tls, credentials), false, true);
        }
        boolean refused = status.getCode() == Status.Code.UNAVAILABLE && Failures.rootCause(t) instanceof ConnectException;
        String why = status.getCode() == Status.Code.DEADLINE_EXCEEDED ? "timed out"
                : status.getCode() + (status.getDescription() == null ? "" : ": " + status.getDescription());
        return new Unanswered(why, !refused);
    }

    /**
     * The failed TLS handshake {@code t} comes from, or null. The client's side of a handshake fails with
     * {@link SSLHandshakeException} (or {@link NotSslRecordException} from a plaintext node); under TLS 1.3
     * the node refuses the client's certificate after the client's side is done, so any TLS failure of a
     * stream that was never answered is the handshake's too.
     */
    private static SSLException tlsFailure(Throwable t, boolean answered) {
        SSLException handshake = Failures.find(t, SSLHandshakeException.class);
        if (handshake == null) {
            handshake = Failures.find(t, NotSslRecordException.class);
        }
        return handshake != null || answered ? handshake : Failures.find(t, SSLException.class);
    }

    private CallStream stream(String address) {
        synchronized (streams) {
            if (closed) {
                throw new IllegalStateException("the client is closed");
            }
            return streams.computeIfAbsent(address, a -> new CallStream(NodeChannels.builder(a, credentials)
                    .eventLoopGroup(network)
                    .channelType(NioSocketChannel.class)
                    .directExecutor()
                    .maxInboundMessageSize(NodeChannels.MAX_ANSWER_BYTES)
                    .build()));
        }
    }

    @Override
    public void close() {
        List<CallStream> open;
        synchronized (streams) {
            if (closed) {
                return;
            }
            closed = true;
            open = new ArrayList<>(streams.values());
            streams.clear();
        }
        open.forEach(CallStream::close);
        open.forEach(s -> s.channel.shutdownNow());
        try {
            for (CallStream s : open) {
                s.channel.awaitTermination(5, TimeUnit.SECONDS);
            }
            network.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            Deadlines.release();
        }
    }
}
