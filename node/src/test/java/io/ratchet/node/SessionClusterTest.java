package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.Backoff;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.Metrics;
import io.ratchet.client.RatchetClient;
import io.ratchet.recipes.session.ClusterSession;
import io.ratchet.recipes.session.ConcurrencyException;
import io.ratchet.recipes.session.Retry;
import io.ratchet.recipes.session.RetryExhaustedException;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Result;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Document sessions with Atomic Guards and the retry loop, against a real three-node cluster. One
 * cluster serves the whole class (each test writes its own documents), and is always stopped.
 */
class SessionClusterTest extends SharedClusterTest {

    record Customer(String name, String tier, String phone) {
        Customer withTier(String tier) {
            return new Customer(name, tier, phone);
        }

        Customer withPhone(String phone) {
            return new Customer(name, tier, phone);
        }
    }

    private static long create(RatchetClient client, String id, Object document) {
        ClusterSession session = ClusterSession.open(client);
        session.store(id, document);
        return session.saveChanges();
    }

    @Test
    void twoSupportAgentsEditCustomer42FromTheSameReadAndWithoutRetryTheSecondSaveIsRefused() {
        RatchetClient agentA = cluster.client();
        RatchetClient agentB = cluster.client();
        long created = create(agentA, "customers/42", new Customer("Ada", "silver", "555-0100"));

        ClusterSession a = ClusterSession.open(agentA);
        ClusterSession b = ClusterSession.open(agentB);
        Customer readByA = a.load(Customer.class, "customers/42").orElseThrow();
        Customer readByB = b.load(Customer.class, "customers/42").orElseThrow();

        a.store("customers/42", readByA.withTier("gold"));
        long savedByA = a.saveChanges();
        b.store("customers/42", readByB.withPhone("555-0199"));
        ConcurrencyException refused = assertThrows(ConcurrencyException.class, b::saveChanges);

        assertEquals(List.of(new Result.Conflict("rvn-atomic/customers/42", created, savedByA)), refused.conflicts());
        Document stored = agentA.getDocument("customers/42").orElseThrow();
        assertEquals(savedByA, stored.index());
        assertEquals(new Customer("Ada", "gold", "555-0100"), as(stored), "A's change stands, B's was not applied");
        assertThrows(IllegalStateException.class, () -> b.load(Customer.class, "customers/42"), "B must re-run its work");
    }

    @Test
    void twoSupportAgentsEditCustomer43AndWithRetryTheDocumentHoldsBothChanges() {
        RatchetClient agentA = cluster.client();
        RatchetClient agentB = cluster.client();
        create(agentA, "customers/43", new Customer("Grace", "silver", "555-0100"));
        AtomicInteger attemptsOfB = new AtomicInteger();

        Retry.of(agentB).run(5, session -> {
            Customer read = session.load(Customer.class, "customers/43").orElseThrow();
            if (attemptsOfB.incrementAndGet() == 1) {
                // Agent A saves between B's read and B's save, from the same state B read.
                Retry.of(agentA).run(5, a -> a.store("customers/43",
                        a.load(Customer.class, "customers/43").orElseThrow().withTier("gold")));
            }
            session.store("customers/43", read.withPhone("555-0199"));
        });

        assertEquals(new Customer("Grace", "gold", "555-0199"), as(agentA.getDocument("customers/43").orElseThrow()));
        assertEquals(2, attemptsOfB.get(), "B's first save was refused, its re-run from a fresh read committed");
        Metrics.KeyStats guard = agentB.metrics().stats("rvn-atomic/customers/43");
        assertEquals(new Metrics.KeyStats("rvn-atomic/customers/43", 2, 1, 1, 0), guard);
        assertEquals(2.0, guard.attemptsPerCommit());
    }

    @Test
    void abaADocumentDeletedAndRecreatedBetweenLoadAndSaveFailsTheSave() {
        RatchetClient client = cluster.client();
        RatchetClient other = cluster.client();
        long created = create(client, "cells/a1", Map.of("v", "A"));

        ClusterSession session = ClusterSession.open(client);
        assertEquals("A", session.load("cells/a1").orElseThrow().get("v").asText());

        ClusterSession deleter = ClusterSession.open(other);
        deleter.load("cells/a1");
        deleter.delete("cells/a1");
        deleter.saveChanges();
        long recreated = create(other, "cells/a1", Map.of("v", "A"));
        assertTrue(recreated > created);

        session.store("cells/a1", Map.of("v", "B"));
        ConcurrencyException refused = assertThrows(ConcurrencyException.class, session::saveChanges);
        assertEquals(List.of(new Result.Conflict("rvn-atomic/cells/a1", created, recreated)), refused.conflicts(),
                "the same content came back, but a guard index never does");
        assertEquals("{\"v\":\"A\"}", client.getDocument("cells/a1").orElseThrow().json());
    }

    @Test
    void guardsAreListedLikeItemsButOnlyDocumentWritesMoveThem() {
        RatchetClient client = cluster.client();
        long saved = create(client, "users/guarded", Map.of("name", "Ada"));

        Item guard = client.get("rvn-atomic/users/guarded").orElseThrow();
        assertEquals(saved, guard.index(), "the guard is written at the document's index");
        assertEquals("{\"Id\":\"users/guarded\"}", guard.value());
        assertEquals(List.of(guard), client.list("rvn-atomic/users/guarded", 0, 10));

        assertThrows(InvalidRequestException.class, () -> client.put("rvn-atomic/users/guarded", Map.of(), saved));
        assertThrows(InvalidRequestException.class, () -> client.delete("rvn-atomic/users/guarded", saved));
        assertThrows(InvalidRequestException.class,
                () -> ClusterSession.open(client).compareExchange().create("rvn-atomic/users/other", "x"));
        assertEquals(saved, client.get("rvn-atomic/users/guarded").orElseThrow().index(), "the guard did not move");
    }

    @Test
    void bankEightTellersMoveMoneyBetweenFiveAccountsAndTheTotalIsConservedWithEveryTransferVisible() throws Exception {
        RatchetClient client = cluster.client();
        int accounts = 5;
        int tellers = 8;
        int transfersEach = 15;
        for (int i = 0; i < accounts; i++) {
            create(client, "accounts/" + i, new Account(1_000, List.of(), List.of()));
        }
        // Short waits: the test wants contention to be resolved, not to wait it out.
        Retry retry = Retry.of(client).withBackoff(new Backoff(Duration.ofMillis(2), Duration.ofMillis(200)));
        Map<String, Transfer> committed = new ConcurrentHashMap<>();
        Set<String> notCommitted = ConcurrentHashMap.newKeySet();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(tellers);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < tellers; t++) {
                Random random = new Random(1_000 + t);
                String teller = "teller-" + t;
                done.add(pool.submit(() -> {
                    go.await();
                    for (int n = 0; n < transfersEach; n++) {
                        int from = random.nextInt(accounts);
                        int to = (from + 1 + random.nextInt(accounts - 1)) % accounts;
                        Transfer transfer = new Transfer(teller + "/" + n, "accounts/" + from, "accounts/" + to,
                                1 + random.nextInt(300));
                        try {
                            if (retry.call(100, transfer::apply)) {
                                committed.put(transfer.id(), transfer);
                            } else {
                                notCommitted.add(transfer.id());
                            }
                        } catch (RetryExhaustedException e) {
                            notCommitted.add(transfer.id());
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }

        assertEquals(tellers * transfersEach, committed.size() + notCommitted.size());
        assertTrue(committed.size() > tellers * transfersEach / 2, "most transfers went through: " + committed.size());
        Map<String, Account> books = new TreeMap<>();
        for (int i = 0; i < accounts; i++) {
            books.put("accounts/" + i, as(client.getDocument("accounts/" + i).orElseThrow(), Account.class));
        }
        assertEquals(accounts * 1_000, books.values().stream().mapToInt(Account::balance).sum(), "no money made or lost");
        for (Map.Entry<String, Account> e : books.entrySet()) {
            Account account = e.getValue();
            assertTrue(account.balance() >= 0, "no overdraft: " + e);
            Set<String> out = committedIds(committed, t -> t.from().equals(e.getKey()));
            Set<String> in = committedIds(committed, t -> t.to().equals(e.getKey()));
            assertEquals(out, new TreeSet<>(account.out()), "every committed transfer from " + e.getKey() + " is on its books, once");
            assertEquals(in, new TreeSet<>(account.in()), "every committed transfer to " + e.getKey() + " is on its books, once");
            assertEquals(account.out().size() + account.in().size(), out.size() + in.size(), "none twice");
            int expected = 1_000 - out.stream().mapToInt(id -> committed.get(id).amount()).sum()
                    + in.stream().mapToInt(id -> committed.get(id).amount()).sum();
            assertEquals(expected, account.balance(), e.getKey() + " reconciles with the committed transfers");
        }
        long guardCommits = 0;
        for (int i = 0; i < accounts; i++) {
            Metrics.KeyStats stats = client.metrics().stats("rvn-atomic/accounts/" + i);
            assertTrue(stats.attempts() >= stats.commits(), stats.toString());
            guardCommits += stats.commits();
        }
        assertEquals(2L * committed.size(), guardCommits, "the metrics count each committed transfer on both its accounts");
    }

    /** A bank account: its balance and the ids of the transfers that moved money out of and into it. */
    record Account(int balance, List<String> out, List<String> in) {
    }

    record Transfer(String id, String from, String to, int amount) {
        /** The unit of work: true when the money moved; false (no change) when the source lacks it. */
        boolean apply(ClusterSession session) {
            Account source = session.load(Account.class, from).orElseThrow();
            Account target = session.load(Account.class, to).orElseThrow();
            if (source.balance() < amount) {
                return false;
            }
            session.store(from, new Account(source.balance() - amount, append(source.out(), id), source.in()));
            session.store(to, new Account(target.balance() + amount, target.out(), append(target.in(), id)));
            return true;
        }

        private static List<String> append(List<String> list, String id) {
            List<String> copy = new ArrayList<>(list);
            copy.add(id);
            return copy;
        }
    }

    private static Set<String> committedIds(Map<String, Transfer> committed, Predicate<Transfer> which) {
        return committed.values().stream().filter(which).map(Transfer::id).collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void noOrphanGuardsAfterCreatingChangingAndDeletingAHundredDocumentsInRandomOrder() throws Exception {
        RatchetClient client = cluster.client();
        long seed = 20_240_601L;
        // Document i belongs to worker i % 5: each document's steps stay in order, the workers overlap.
        int workers = 5;
        AtomicInteger failedSaves = new AtomicInteger();
        Set<String> live = new TreeSet<>();
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        try {
            List<Future<Set<String>>> done = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                List<String> ids = new ArrayList<>();
                for (int i = w; i < 100; i += workers) {
                    ids.add("orphans/" + i);
                }
                Random random = new Random(seed + w);
                done.add(pool.submit(() -> liveRandomly(client, ids, random, failedSaves)));
            }
            for (Future<Set<String>> f : done) {
                live.addAll(f.get());
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(failedSaves.get() > 0);

        Map<String, Long> guards = new TreeMap<>();
        for (int start = 0; ; start += Limits.MAX_PAGE_SIZE) {
            List<Item> page = client.list("rvn-atomic/orphans/", start, Limits.MAX_PAGE_SIZE);
            page.forEach(g -> guards.put(g.key().substring("rvn-atomic/".length()), g.index()));
            if (page.size() < Limits.MAX_PAGE_SIZE) {
                break;
            }
        }
        assertEquals(live, guards.keySet(), "the guards are exactly the live documents (seed " + seed + ")");
        Map<String, CompletableFuture<Optional<Document>>> documents = new TreeMap<>();
        for (int i = 0; i < 100; i++) {
            documents.put("orphans/" + i, client.getDocumentAsync("orphans/" + i));
        }
        documents.forEach((id, document) -> assertEquals(guards.getOrDefault(id, 0L),
                document.join().map(Document::index).orElse(0L), id + ": a document and its guard share their index"));
        // Every replica holds the same guards.
        String leader = cluster.awaitLeader();
        long applied = cluster.appliedIndex(leader);
        for (String node : cluster.nodeIds()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> cluster.appliedIndex(node) >= applied);
            Set<String> onNode = cluster.itemsOn(node).stream().map(Item::key)
                    .filter(k -> k.startsWith("rvn-atomic/orphans/"))
                    .map(k -> k.substring("rvn-atomic/".length())).collect(Collectors.toCollection(TreeSet::new));
            assertEquals(live, onNode, "guards on " + node);
        }
    }

    @Test
    void concurrentIncrementsThroughUpdateLoseNothing() throws Exception {
        RatchetClient client = cluster.client();
        Retry retry = Retry.of(client).withBackoff(new Backoff(Duration.ofMillis(2), Duration.ofMillis(100)));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                done.add(pool.submit(() -> {
                    for (int n = 0; n < 10; n++) {
                        retry.update("counters/page-views", Integer.class, 50, v -> v == null ? 1 : v + 1);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(40, client.get("counters/page-views").orElseThrow().valueNode().asInt());
        Metrics.KeyStats stats = client.metrics().stats("counters/page-views");
        // Updates of one key from one client combine: 40 land in fewer puts, each counted once.
        assertTrue(stats.commits() >= 1 && stats.commits() <= 40, "commits " + stats.commits());
        assertEquals(stats.attempts(), stats.commits() + stats.conflicts(), "every refused put was one more attempt");
    }

    /**
     * Lives {@code ids} through in random order, one session a step: each is created, changed 0..3
     * times, maybe deleted, maybe created again. Every tenth step also carries a doomed create of
     * another live document, so that whole save fails and the step is done again later. Returns the
     * ids alive at the end.
     */
    private static Set<String> liveRandomly(RatchetClient client, List<String> ids, Random random, AtomicInteger failedSaves) {
        Map<String, Deque<String>> lives = new HashMap<>();
        for (String id : ids) {
            Deque<String> steps = new ArrayDeque<>(List.of("create"));
            for (int c = random.nextInt(4); c > 0; c--) {
                steps.add("change");
            }
            if (random.nextBoolean()) {
                steps.add("delete");
                if (random.nextInt(4) == 0) {
                    steps.add("create");
                }
            }
            lives.put(id, steps);
        }
        Set<String> live = new TreeSet<>();
        List<String> pending = new ArrayList<>(ids);
        for (int step = 0; !pending.isEmpty(); step++) {
            String id = pending.get(random.nextInt(pending.size()));
            String what = lives.get(id).poll();
            ClusterSession session = ClusterSession.open(client);
            switch (what) {
                case "create" -> session.store(id, Map.of("step", step));
                case "change" -> session.store(id, Map.of("step", step, "was", session.load(id).orElseThrow()));
                default -> {
                    session.load(id).orElseThrow();
                    session.delete(id);
                }
            }
            String bystander = live.stream().filter(d -> !d.equals(id)).findFirst().orElse(null);
            if (step % 10 == 0 && bystander != null) {
                long guardBefore = guardIndex(client, id);
                session.store(bystander, Map.of("doomed", true));
                assertThrows(ConcurrencyException.class, session::saveChanges);
                assertEquals(guardBefore, guardIndex(client, id), "a failed save leaves no guard behind and moves none");
                failedSaves.incrementAndGet();
                lives.get(id).push(what);
                continue;
            }
            session.saveChanges();
            if (what.equals("delete")) {
                live.remove(id);
            } else {
                live.add(id);
            }
            if (lives.get(id).isEmpty()) {
                pending.remove(id);
            }
        }
        return live;
    }

    private static long guardIndex(RatchetClient client, String id) {
        return client.get(Document.guardKey(id)).map(Item::index).orElse(0L);
    }

    private static Customer as(Document document) {
        return as(document, Customer.class);
    }

    private static <T> T as(Document document, Class<T> type) {
        return Json.MAPPER.convertValue(document.node(), type);
    }
}
