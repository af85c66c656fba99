package io.ratchet.node;

import io.ratchet.common.Credentials;
import io.ratchet.common.NodeChannels;
import io.ratchet.protocol.PaceRpc;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;

/**
 * Asks other nodes how starved of CPU they are ({@link PaceRpc}: the share of the last second their
 * pace thread waited for a core), over channels kept open per address: the slow-leader watch, before it
 * hands leadership away, and the leader balancer, before it hands a group to a node. One per node, for
 * every group: it keeps each node's answers of the last {@link Answers#KEPT}, the last of them for the
 * watch ({@link #refresh}, {@link #recent}), so that however many groups this node leads, another node is
 * asked at most once every {@link #REFRESH}, and all of them for the balancer, to pass over a node that
 * was starved a moment ago ({@link #highestSince}).
 */
final class PaceAsker implements AutoCloseable {
    /** How long an answer may take: a node that cannot answer in this is as good as slow. */
    static final long ASK_MILLIS = 400;
    /** How often {@link #refresh} asks one node again. */
    static final Duration REFRESH = Duration.ofMillis(500);

    /** A node's stalled share as it answered, and when the answer came ({@link System#nanoTime}). */
    record Answer(double share, long at) {
        @Override
        public String toString() {
            return Math.round(share * 100) + "%";
        }
    }

    private final Credentials credentials;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final Map<String, Answers> kept = new ConcurrentHashMap<>();
    /** When {@link #refresh} last asked each address. */
    private final Map<String, Long> asked = new ConcurrentHashMap<>();

    PaceAsker(Credentials credentials) {
        this.credentials = credentials;
    }

    /** Closes the channels of addresses no longer among {@code members}: a member removed keeps none open. */
    void forgetAllBut(Collection<RaftPeer> members) {
        channels.keySet().removeIf(address -> {
            boolean gone = members.stream().noneMatch(peer -> address.equals(peer.getAddress()));
            if (gone) {
                channels.get(address).shutdownNow();
                kept.remove(address);
                asked.remove(address);
            }
            return gone;
        });
    }

    /**
     * Asks the node at {@code address} its share in the background, allowing {@code millis}, unless it was
     * asked within {@link #REFRESH}; the answer is kept for {@link #recent}. At most {@code millis / REFRESH}
     * questions to one node are out at once.
     */
    void refresh(String address, long millis) {
        long now = System.nanoTime();
        Long last = asked.get(address);
        if (last != null && now - last < REFRESH.toNanos()) {
            return;
        }
        // Of watches refreshing the same node at once, the one whose swap lands asks.
        boolean mine = last == null ? asked.putIfAbsent(address, now) == null : asked.replace(address, last, now);
        if (!mine) {
            return;
        }
        stalledShareOf(address, millis); // its answer is kept
    }

    /** The last answer the node at {@code address} gave, to {@link #refresh} or any question, if any is kept. */
    Optional<Answer> recent(String address) {
        Answers a = kept.get(address);
        return a == null ? Optional.empty() : a.last();
    }

    /**
     * The highest share the node at {@code address} answered (to {@link #refresh} or any question) at or
     * after {@code since} ({@link System#nanoTime}; at most {@link Answers#KEPT} back), if it answered then.
     * Questions it left unanswered are not kept: the balancer's own looks tell a node that is away.
     */
    Optional<Double> highestSince(String address, long since) {
        Answers a = kept.get(address);
        return a == null ? Optional.empty() : a.highestSince(since);
    }

    /** The node at {@code address}'s stalled share; fails when it does not answer within {@link #ASK_MILLIS}. */
    CompletableFuture<Double> stalledShareOf(String address) {
        return stalledShareOf(address, ASK_MILLIS);
    }

    /**
     * The same, allowing {@code millis}: a starved node asking healthy ones reads their answers late, and
     * would count them as silent within {@link #ASK_MILLIS}.
     */
    CompletableFuture<Double> stalledShareOf(String address, long millis) {
        CompletableFuture<Double> share = new CompletableFuture<>();
        try {
            ManagedChannel channel = channels.computeIfAbsent(address, a -> NodeChannels.open(a, credentials));
            ClientCalls.asyncUnaryCall(channel.newCall(PaceRpc.STALLED, CallOptions.DEFAULT.withDeadlineAfter(millis,
                    TimeUnit.MILLISECONDS)), new byte[0], new StreamObserver<>() {
                        @Override
                        public void onNext(byte[] answer) {
                            try {
                                double decoded = PaceRpc.decode(answer);
                                kept.computeIfAbsent(address, a -> new Answers()).add(new Answer(decoded, System.nanoTime()));
                                share.complete(decoded);
                            } catch (IllegalArgumentException e) {
                                share.completeExceptionally(e);
                            }
                        }

                        @Override
                        public void onError(Throwable t) {
                            share.completeExceptionally(t);
                        }

                        @Override
                        public void onCompleted() {
                            share.completeExceptionally(new IllegalStateException("no answer"));
                        }
                    });
        } catch (RuntimeException e) {
            share.completeExceptionally(e);
        }
        return share;
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
    }

    /** One node's answers of the last {@link #KEPT}, oldest first. */
    static final class Answers {
        /** How far back answers are kept: longer than the balancer's steady time by default (30 s). */
        static final Duration KEPT = Duration.ofSeconds(60);
        private final Deque<Answer> answers = new ArrayDeque<>();

        synchronized void add(Answer answer) {
            answers.addLast(answer);
            while (!answers.isEmpty() && answer.at() - answers.peekFirst().at() > KEPT.toNanos()) {
                answers.removeFirst();
            }
        }

        synchronized Optional<Answer> last() {
            return Optional.ofNullable(answers.peekLast());
        }

        synchronized Optional<Double> highestSince(long since) {
            return answers.stream().filter(a -> a.at() - since >= 0).map(Answer::share).max(Double::compare);
        }
    }
}
