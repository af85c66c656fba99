package io.ratchet.client.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.ClientOptions;
import io.ratchet.protocol.Refusal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Where an operation's attempts go while a cluster fails over, against nodes that answer as scripted. */
class AttemptsTest {
    private static final byte[] DONE = {42};

    /**
     * The old leader is down; the new one is elected but not ready, and says so naming itself. The
     * attempts stay with it until it serves, instead of moving on to the follower (which only sends them
     * back) or round to the node that is down.
     */
    @Test
    void aLeaderNotReadyYetIsAskedAgainNotPassedOver() throws Exception {
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        AtomicInteger notReady = new AtomicInteger(2);
        Transport.Connector nodes = scripted(calls, address -> switch (address) {
            case "down:1" -> new Transport.Unanswered("UNAVAILABLE: io exception", false);
            case "leader:2" -> notReady.getAndDecrement() > 0
                    ? new Transport.Refused(Refusal.leaderNotReady("n2", "leader:2"))
                    : new Transport.Answered(DONE, null);
            default -> new Transport.Refused(Refusal.notLeader("n2", "leader:2"));
        });
        try (Transport transport = new Transport(List.of("down:1", "leader:2", "follower:3"), timers -> nodes)) {
            Attempts attempts = new Attempts(transport, ClientOptions.parse("n1=down:1,n2=leader:2,n3=follower:3"));
            Attempts.Delivery delivery = attempts.send((byte) 1, new byte[] {1}, Duration.ofSeconds(5), Duration.ofSeconds(1))
                    .get(10, TimeUnit.SECONDS);
            assertArrayEquals(DONE, delivery.results());
            assertEquals(1, calls.get("down:1").get(), "the node that is down is tried once: " + calls);
            assertEquals(3, calls.get("leader:2").get(), "the new leader, until ready: " + calls);
            assertEquals(null, calls.get("follower:3"), "the follower is never asked: " + calls);
            assertEquals("leader:2", transport.leader());
        }
    }

    /**
     * A node that keeps naming itself a leader not ready (a leader that lost its majority, or a node of an
     * earlier release whose division Ratis closed when it was removed from the group) is asked again only
     * for a while: then the call moves on and finds the leader that replaced it, well within its budget.
     */
    @Test
    void aLeaderThatStaysUnreadyIsLeftForTheOneThatServes() throws Exception {
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        Transport.Connector nodes = scripted(calls, address -> switch (address) {
            case "stuck:1" -> new Transport.Refused(Refusal.leaderNotReady("n1", "stuck:1"));
            case "leader:2" -> new Transport.Answered(DONE, null);
            default -> new Transport.Refused(Refusal.notLeader("n2", "leader:2"));
        });
        try (Transport transport = new Transport(List.of("stuck:1", "leader:2", "follower:3"), timers -> nodes)) {
            Attempts attempts = new Attempts(transport, ClientOptions.parse("n1=stuck:1,n2=leader:2,n3=follower:3"));
            Attempts.Delivery delivery = attempts.send((byte) 1, new byte[] {1}, Duration.ofSeconds(10), Duration.ofSeconds(1))
                    .get(15, TimeUnit.SECONDS);
            assertArrayEquals(DONE, delivery.results());
            assertEquals("leader:2", transport.leader());
            int stuck = calls.get("stuck:1").get();
            assertTrue(stuck > 2, "the unready leader is asked again for a while first: " + calls);
        }
    }

    /** Nodes that answer each call as {@code answer} says for the address called, counting the calls. */
    private static Transport.Connector scripted(Map<String, AtomicInteger> calls, Function<String, Transport.Outcome> answer) {
        return new Transport.Connector() {
            @Override
            public CompletableFuture<Transport.Outcome> call(byte method, int group, String address, byte[] message, Duration timeout) {
                calls.computeIfAbsent(address, a -> new AtomicInteger()).incrementAndGet();
                return CompletableFuture.completedFuture(answer.apply(address));
            }

            @Override
            public void close() {
            }
        };
    }
}
