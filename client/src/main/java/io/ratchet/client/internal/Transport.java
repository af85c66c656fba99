package io.ratchet.client.internal;

import io.ratchet.client.ClientEvents;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Refusal;
import io.ratchet.protocol.Rpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.ratis.thirdparty.io.netty.util.HashedWheelTimer;

/**
 * The client's view of the cluster: the node addresses, which one is believed to lead, the client's
 * timer thread, and a {@link Connector} that carries one call to one node. A call ends in an
 * {@link Outcome}: an answer, a typed refusal, or no answer. Retrying is the caller's business
 * ({@link Attempts}).
 */
public final class Transport implements AutoCloseable {
    /** What one call to one node came to. */
    public sealed interface Outcome {
    }

    /**
     * The node carried it out: its results message, and, when a follower served a read, where the leader
     * is ({@link Codec#withLeader}); null otherwise.
     */
    public record Answered(byte[] results, String leader) implements Outcome {
    }

    /** The node did not carry it out, and says why; nothing was written. */
    public record Refused(Refusal refusal) implements Outcome {
    }

    /**
     * No answer. {@code delivered} is false only when the request certainly never reached the node
     * (the connection could not be made); otherwise a write may have been applied. {@code tlsRefused}:
     * the connection's TLS handshake failed (a certificate one side does not trust, a plaintext node),
     * which no retry mends while the files stay as they are.
     */
    public record Unanswered(String why, boolean delivered, boolean tlsRefused) implements Outcome {
        public Unanswered(String why, boolean delivered) {
            this(why, delivered, false);
        }
    }

    /**
     * What a node's answer {@code bytes} says, as the front end encodes it: a refusal, or results; an
     * answer that does not parse is unanswered (and may have been carried out).
     */
    public static Outcome outcomeOf(byte[] bytes) {
        try {
            return Codec.isRefusal(bytes) ? new Refused(Codec.decodeRefusal(bytes)) : new Answered(bytes, Codec.leaderOf(bytes));
        } catch (RuntimeException e) {
            return new Unanswered("the answer does not parse: " + e.getMessage(), true);
        }
    }

    /**
     * Carries one call to one node: over gRPC to the nodes' front ends ({@link GrpcConnector}), or, in
     * tests, to a store in the same process. Never completes exceptionally.
     */
    public interface Connector extends AutoCloseable {
        /** One call of {@code method} to group {@code group} ({@link Rpc#frame(long, byte, int, byte[])}). */
        CompletableFuture<Outcome> call(byte method, int group, String address, byte[] message, Duration timeout);

        @Override
        void close();
    }

    /** The node addresses, shared by the transport of every group. */
    private final List<String> addresses;
    /** The client's timers: call timeouts, and pauses between attempts in {@link Attempts}. */
    private final ScheduledThreadPoolExecutor timers;
    private final Connector connector;
    /** Hedges' deadlines: the process's wheel, held open until this closes. */
    private final HashedWheelTimer deadlines;
    /** The transport of group 0, which owns what the groups share and closes it; this one for group 0. */
    private final Transport root;
    /** The group this transport's calls go to ({@link io.ratchet.protocol.Groups}). */
    private final int group;
    private volatile String leader;
    private volatile boolean closed;
    /** Told of each leader change followed; shared by every group's transport. */
    private final ClientEvents events;

    /**
     * {@code connector} is made with the client's timer thread, which it may use for its timeouts. The
     * transport is group 0's; {@link #forGroup} gives the others'.
     */
    public Transport(List<String> addresses, Function<ScheduledExecutorService, Connector> connector) {
        this(addresses, connector, new ClientEvents());
    }

    /** As {@link #Transport(List, Function)}, reporting the leader changes it follows to {@code events}. */
    public Transport(List<String> addresses, Function<ScheduledExecutorService, Connector> connector, ClientEvents events) {
        this.events = events;
        this.addresses = new ArrayList<>(addresses);
        this.leader = addresses.get(0);
        this.timers = timers();
        this.connector = connector.apply(timers);
        this.deadlines = Deadlines.acquire();
        this.root = this;
        this.group = 0;
    }

    private Transport(Transport root, int group, String leader) {
        this.events = root.events;
        this.addresses = root.addresses;
        this.timers = root.timers;
        this.connector = root.connector;
        this.deadlines = root.deadlines;
        this.root = root;
        this.group = group;
        this.leader = leader;
    }

    /**
     * The transport of group {@code group}: the same nodes, connections and timers, and its own belief of
     * who leads, starting at {@code leader} (null: the node group 0 believes leads). Closed with this one.
     */
    public Transport forGroup(int group, String leader) {
        if (group == 0) {
            if (leader != null && !leader.isEmpty()) {
                follow(leader);
            }
            return root;
        }
        return new Transport(root, group, leader == null || leader.isEmpty() ? root.leader : leader);
    }


    /**
     * Completes {@code delay} from now, give or take {@link Deadlines#TICK} late, never early: for a
     * deadline that is nearly always cancelled first (a hedge). Cancelling it takes the timer away.
     */
    public CompletableFuture<Void> deadline(Duration delay) {
        return Deadlines.future(deadlines, delay);
    }

    /**
     * Completes {@code delay} from now, on the client's timer thread; fails once the client is closed.
     * Cancelling it takes the timer away.
     */
    public CompletableFuture<Void> after(Duration delay) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            var timer = timers.schedule(() -> done.complete(null), delay.toNanos(), TimeUnit.NANOSECONDS);
            done.whenComplete((v, e) -> {
                if (done.isCancelled()) {
                    timer.cancel(false);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            done.completeExceptionally(new IllegalStateException("the client is closed"));
        }
        return done;
    }

    /** The node believed to lead: where writes and linearizable reads go first. */
    public String leader() {
        return leader;
    }

    /** After a node failed to serve: the next one in the list, so an outage is not retried in place. */
    public void skip(String failed) {
        synchronized (addresses) {
            if (leader.equals(failed)) {
                leader = addresses.get((addresses.indexOf(failed) + 1) % addresses.size());
            }
        }
    }

    /** A node said who leads; a leader at an address the client was not given is added. */
    public void follow(String address) {
        boolean moved;
        synchronized (addresses) {
            if (!addresses.contains(address)) {
                addresses.add(address);
            }
            moved = !address.equals(leader);
            leader = address;
        }
        if (moved) {
            events.leaderFollowed();
        }
    }

    /** Where this client's events go: the attempts and the session report there too. */
    public ClientEvents events() {
        return events;
    }

    public List<String> addresses() {
        synchronized (addresses) {
            return List.copyOf(addresses);
        }
    }

    /**
     * Sends one message to the node at {@code address} as a call of {@code method} ({@link Rpc#WRITE_CALL},
     * {@link Rpc#READ_CALL} or {@link Rpc#STALE_READ_CALL}); never completes exceptionally.
     */
    public CompletableFuture<Outcome> call(byte method, String address, byte[] message, Duration timeout) {
        if (closed()) {
            return CompletableFuture.completedFuture(new Unanswered("the client is closed", false));
        }
        return connector.call(method, group, address, message, timeout);
    }

    public boolean closed() {
        return root.closed;
    }

    /** Closes what every group shares; a group's transport closes with group 0's. */
    @Override
    public synchronized void close() {
        if (root != this) {
            root.close();
            return;
        }
        if (closed) {
            return;
        }
        closed = true;
        try {
            connector.close();
        } finally {
            timers.shutdownNow();
            Deadlines.release();
        }
    }

    private static ScheduledThreadPoolExecutor timers() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, DaemonThreads.named("ratchet-client-timers"));
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }
}
