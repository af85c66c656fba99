package io.ratchet.spring.integration;

import static io.ratchet.testing.InProcessCluster.N1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.Item;
import io.ratchet.testing.InProcessCluster;
import io.ratchet.testing.InProcessClusterExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** The metadata store against {@link InProcessCluster}: the real store's compare-exchange. */
@ExtendWith(InProcessClusterExtension.class)
@Timeout(30)
class RatchetMetadataStoreTest {
    private InProcessCluster cluster;
    private RatchetMetadataStore store;

    @BeforeEach
    void start(InProcessCluster cluster) {
        this.cluster = cluster;
        store = new RatchetMetadataStore(cluster.client(InProcessCluster.options(N1)));
    }

    private Item item(String key) {
        return cluster.item("metadata/" + key).orElseThrow();
    }

    @Test
    void putStoresTheValueAsAJsonStringUnderThePrefixAndOverwrites() {
        assertNull(store.get("feed"));
        store.put("feed", "42");
        assertEquals("\"42\"", item("feed").value(), "a JSON string, never taken for JSON");
        assertEquals("42", store.get("feed"));

        store.put("feed", "{\"not\": \"json\"}");
        assertEquals("{\"not\": \"json\"}", store.get("feed"));
        assertEquals("{\"not\": \"json\"}", store.get("FEED"), "keys compare without case, as Ratchet's do");

        RatchetMetadataStore other = new RatchetMetadataStore(cluster.client(), "apps/x/");
        other.put("feed", "7");
        assertEquals("\"7\"", cluster.item("apps/x/feed").orElseThrow().value());
        assertEquals("{\"not\": \"json\"}", store.get("feed"), "another prefix, another entry");
    }

    @Test
    void putIfAbsentIsACreateOnlyPut() {
        assertNull(store.putIfAbsent("k", "first"), "absent: set, and null returned");
        assertEquals("first", store.putIfAbsent("k", "second"), "present: the current value returned");
        assertEquals("first", store.get("k"), "and left as it was");
        long index = item("k").index();
        assertEquals("first", store.putIfAbsent("k", "third"));
        assertEquals(index, item("k").index(), "a refused create writes nothing");
    }

    @Test
    void replaceSwapsOnlyFromTheExpectedValue() {
        assertFalse(store.replace("k", "a", "b"), "no value: nothing to replace");
        assertNull(store.get("k"));

        store.put("k", "a");
        assertFalse(store.replace("k", "x", "b"));
        assertEquals("a", store.get("k"));

        assertTrue(store.replace("k", "a", "b"));
        assertEquals("b", store.get("k"));
        assertFalse(store.replace("k", "a", "c"), "a no longer");
        assertEquals("b", store.get("k"));
    }

    @Test
    void replaceIsAtomicWhenAnotherWriterGetsInBetweenItsReadAndItsPut() {
        store.put("k", "a");
        AtomicBoolean once = new AtomicBoolean();
        cluster.beforeWrite(() -> {
            if (once.compareAndSet(false, true)) {
                cluster.putItem("metadata/k", "\"other\"");
            }
        });

        assertFalse(store.replace("k", "a", "b"), "the value it read was changed before its put: its condition failed");
        assertEquals("other", store.get("k"), "the other writer's value stands");
    }

    @Test
    void replaceStillSucceedsWhenAConcurrentWriteLeftTheSameValue() {
        store.put("k", "a");
        AtomicBoolean once = new AtomicBoolean();
        cluster.beforeWrite(() -> {
            if (once.compareAndSet(false, true)) {
                cluster.putItem("metadata/k", "\"a\"");
            }
        });
        long before = item("k").index();

        assertTrue(store.replace("k", "a", "b"), "the value is still 'a' at the new index: compared and put again");
        assertEquals("b", store.get("k"));
        assertTrue(item("k").index() > before + 1);
    }

    @Test
    void removeReturnsTheValueItRemoved() {
        assertNull(store.remove("k"));
        store.put("k", "v");
        assertEquals("v", store.remove("k"));
        assertTrue(cluster.item("metadata/k").isEmpty());
        assertNull(store.get("k"));
        assertNull(store.remove("k"));
    }

    @Test
    void removeAfterAConcurrentChangeRemovesAndReturnsTheNewValue() {
        store.put("k", "old");
        AtomicBoolean once = new AtomicBoolean();
        cluster.beforeWrite(() -> {
            if (once.compareAndSet(false, true)) {
                cluster.putItem("metadata/k", "\"new\"");
            }
        });
        assertEquals("new", store.remove("k"), "the value actually removed");
        assertTrue(cluster.item("metadata/k").isEmpty());
    }

    @Test
    void ofManyConcurrentReplacesFromTheSameValueExactlyOneWins() throws Exception {
        replaceRace(store, () -> new RatchetMetadataStore(cluster.client()), 8);
    }

    /** {@code threads} stores, each its own client, replace "v0" at once: exactly one wins, and its value stands. */
    static void replaceRace(RatchetMetadataStore setup, java.util.function.Supplier<RatchetMetadataStore> stores, int threads)
            throws Exception {
        setup.put("race", "v0");
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<Boolean>> outcomes = new ArrayList<>();
            for (int i = 1; i <= threads; i++) {
                String value = "v" + i;
                RatchetMetadataStore mine = stores.get();
                outcomes.add(pool.submit(() -> {
                    go.await();
                    return mine.replace("race", "v0", value);
                }));
            }
            go.countDown();
            List<String> winners = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                if (outcomes.get(i).get(30, TimeUnit.SECONDS)) {
                    winners.add("v" + (i + 1));
                }
            }
            assertEquals(1, winners.size(), "winners: " + winners);
            assertEquals(winners.get(0), setup.get("race"));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentPutsAllSucceedAndOneOfThemStands() throws Exception {
        int threads = 6;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<?>> puts = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                String value = "p" + i;
                RatchetMetadataStore mine = new RatchetMetadataStore(cluster.client());
                puts.add(pool.submit(() -> {
                    go.await();
                    mine.put("k", value);
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> put : puts) {
                put.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(store.get("k").matches("p[0-5]"), store.get("k"));
    }

    @Test
    void badKeysAndNullValuesAreRefusedClearly() {
        IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class, () -> store.put("x".repeat(600), "v"));
        assertTrue(tooLong.getMessage().contains("does not make a valid Ratchet key"), tooLong.getMessage());
        assertThrows(IllegalArgumentException.class, () -> store.get(""));
        assertThrows(IllegalArgumentException.class, () -> store.get(null));
        assertThrows(IllegalArgumentException.class, () -> new RatchetMetadataStore(cluster.client(), "").get("rvn-atomic/x"),
                "a key reserved for Atomic Guards");
        assertThrows(IllegalArgumentException.class, () -> store.put("k", null));
        assertThrows(IllegalArgumentException.class, () -> store.replace("k", null, "v"));
        assertTrue(cluster.item("metadata/k").isEmpty(), "nothing written");
    }

    @Test
    void anItemThatIsNotAJsonStringWasNotWrittenByAStoreAndIsNotReadAsOne() {
        cluster.putItem("metadata/n", "{\"a\":1}");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> store.get("n"));
        assertTrue(e.getMessage().contains("not a JSON string"), e.getMessage());
    }
}
