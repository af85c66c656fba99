package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.ClientOptions;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Item;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Group commit on a real cluster: many requests share entries, yet each keeps its own order and outcome. */
class GroupCommitClusterTest {
    @TempDir
    Path dir;

    @Test
    void aBurstOfSignUpsFromOneClientSharesLogEntriesAndEveryNodeAppliesThemInOrder() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient client = cluster.client();
            List<CompletableFuture<CompareExchangeResult>> signUps = new ArrayList<>();
            List<CompletableFuture<CompareExchangeResult>> secondTries = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                signUps.add(client.putAsync("emails/user" + i + "@example.com", "users/" + i, 0));
                // Sent after the first: it must apply after it, so it must find the address taken.
                secondTries.add(client.putAsync("emails/user" + i + "@example.com", "intruder", 0));
            }

            List<Long> indexes = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                CompareExchangeResult first = signUps.get(i).join();
                CompareExchangeResult second = secondTries.get(i).join();
                assertTrue(first.successful(), "sign-up " + i);
                assertFalse(second.successful(), "the later create-only put of the same address is refused");
                assertEquals("\"users/" + i + "\"", second.value(), "and it is told who holds it");
                assertEquals(first.index(), second.index());
                indexes.add(first.index());
            }
            for (int i = 1; i < indexes.size(); i++) {
                assertTrue(indexes.get(i - 1) <= indexes.get(i), "applied in the order sent: " + indexes);
            }
            long entries = indexes.stream().distinct().count();
            assertTrue(entries < 100, "400 requests shared entries, " + entries + " entries for 200 sign-ups");

            // Gets that queue up are served in batches too; each still gets its own item.
            List<CompletableFuture<java.util.Optional<Item>>> reads = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                reads.add(client.getAsync("EMAILS/User" + i + "@example.com"));
            }
            for (int i = 0; i < 200; i++) {
                Item read = reads.get(i).join().orElseThrow();
                assertEquals("emails/user" + i + "@example.com", read.key());
                assertEquals((long) indexes.get(i), read.index());
            }
            assertTrue(client.getAsync("emails/nobody@example.com").join().isEmpty());

            for (String node : cluster.nodeIds()) {
                await().atMost(Duration.ofSeconds(30)).until(() -> cluster.itemsOn(node).size() == 200);
                List<Item> items = cluster.itemsOn(node);
                for (int i = 0; i < 200; i++) {
                    String key = "emails/user" + i + "@example.com";
                    long expected = indexes.get(i);
                    assertTrue(items.stream().anyMatch(it -> it.key().equals(key) && it.index() == expected),
                            node + " holds " + key + " at " + expected);
                }
            }
        }
    }

    @Test
    void whenTheClusterGoesDownEveryWriteFailsAndWhereNoConnectionWasMadeItIsKnownNotApplied() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            ClientOptions quick = ClientOptions.parse(cluster.peers()).withTimeouts(Duration.ofMillis(500), 2, Duration.ofSeconds(2));
            RatchetClient connected = cluster.client(quick);
            connected.put("warm", 1, 0);
            cluster.stopAll();
            RatchetClient late = cluster.client(quick);

            // The first message may go out on a stream the node closed an instant before: whether it got
            // there is not certain. None succeeds, and none is reported as anything but those two.
            for (CompletableFuture<CompareExchangeResult> w : burst(connected, "lost/")) {
                Throwable fate = assertThrows(CompletionException.class, w::join).getCause();
                assertTrue(fate instanceof ClusterUnavailableException || fate instanceof UnknownOutcomeException, fate.toString());
            }

            // A client that never reached a node: nothing was delivered, so it is certain.
            for (CompletableFuture<CompareExchangeResult> w : burst(late, "never/")) {
                assertInstanceOf(ClusterUnavailableException.class, assertThrows(CompletionException.class, w::join).getCause());
            }
        }
    }

    private static List<CompletableFuture<CompareExchangeResult>> burst(RatchetClient client, String prefix) {
        List<CompletableFuture<CompareExchangeResult>> writes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            writes.add(client.putAsync(prefix + i, i, 0));
        }
        return writes;
    }
}
