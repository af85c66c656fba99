package io.ratchet.recipes.docs;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Command;
import io.ratchet.recipes.session.ClusterSession;
import io.ratchet.testing.InProcessCluster;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assertions;

/**
 * What the documentation's Java snippets name without declaring it. {@link DocsSnippetsTest} wraps each
 * snippet that is a list of statements into {@link #run()} of a class extending this one, and calls
 * {@link #prepare} on a fresh {@link InProcessCluster} first, so that each snippet's happy path runs: the
 * items and documents it reads exist, and the indexes it names are their current ones.
 */
public abstract class SnippetContext {
    /** A resource a lock protects: it refuses a fencing token lower than the highest it has seen. */
    public interface Printer {
        void print(Object page, long fencingToken);
    }

    /** What a leader runs: resumed with the term it leads in, paused when it stops leading. */
    public interface Scheduler {
        void resume(long term);

        void pause();
    }

    /** The document of the session and retry snippets ({@code customers/42}). */
    public record Customer(String name, String tier, String phone) {
        public Customer(String name) {
            this(name, null, null);
        }

        public Customer withTier(String tier) {
            return new Customer(name, tier, phone);
        }

        public Customer withPhone(String phone) {
            return new Customer(name, tier, phone);
        }
    }

    /** A document {@link #transfer} moves money between. */
    public record Account(long balance) {
    }

    /** The fencing tokens the printer accepted, in order. */
    protected final List<Long> printed = new CopyOnWriteArrayList<>();
    /** The terms the scheduler was resumed in, in order. */
    protected final List<Long> terms = new CopyOnWriteArrayList<>();
    protected final AtomicInteger pauses = new AtomicInteger();

    protected InProcessCluster cluster;
    protected RatchetClient client;
    protected final Printer printer = (page, token) -> {
        if (!printed.isEmpty() && token < printed.get(printed.size() - 1)) {
            throw new IllegalStateException("fencing token " + token + " is lower than " + printed);
        }
        printed.add(token);
    };
    protected final Object document = "the document";
    protected final Object firstPage = "page 1";
    protected final Object secondPage = "page 2";
    protected final Scheduler scheduler = new Scheduler() {
        @Override
        public void resume(long term) {
            terms.add(term);
        }

        @Override
        public void pause() {
            pauses.incrementAndGet();
        }
    };
    /** The current indexes of {@code shop/status}, {@code carts/ada}, {@code accounts/alice}, {@code accounts/bob}. */
    protected long openIndex;
    protected long cartIndex;
    protected long aliceIndex;
    protected long bobIndex;
    /** A transaction's operations: a create-only put of {@code carts/checkout-42}. */
    protected List<Command.Op> ops;
    /** An open session with one unsaved change (document {@code carts/9}). */
    protected ClusterSession session;
    protected final String attemptId = "1";
    protected final MeterRegistry meterRegistry = new SimpleMeterRegistry();

    /** The snippet. */
    public abstract void run() throws Exception;

    final void prepare(InProcessCluster cluster) {
        this.cluster = cluster;
        this.client = cluster.client();
        openIndex = cluster.putItem("shop/status", "\"open\"");
        cartIndex = cluster.putItem("carts/ada", "{\"skus\":[3]}");
        aliceIndex = cluster.putItem("accounts/alice", "100");
        bobIndex = cluster.putItem("accounts/bob", "100");
        cluster.putItem("stock/widgets", "10");
        cluster.putDocument("customers/42", "{\"name\":\"Ada\"}");
        cluster.putDocument("customers/44", "{\"name\":\"Charles\"}");
        cluster.putDocument("accounts/3", "{\"balance\":100}");
        cluster.putDocument("accounts/4", "{\"balance\":0}");
        ops = List.of(new Command.Put("carts/checkout-42", "{\"total\":25}", 0, null));
        session = ClusterSession.open(client);
        session.store("carts/9", Map.of("skus", List.of(3)));
    }

    /**
     * What {@code RatchetClient.connect("...")} becomes when a snippet runs: another client of the
     * in-process cluster, which the snippet may close (the cluster and {@link #client} stay).
     */
    protected final RatchetClient connectForDocs() {
        return cluster.client();
    }

    /** A unit of work for {@code Retry.call}: moves 10 from {@code accounts/3} to {@code accounts/4}. */
    protected final boolean transfer(ClusterSession session) {
        Account from = session.load(Account.class, "accounts/3").orElseThrow();
        Account to = session.load(Account.class, "accounts/4").orElseThrow();
        if (from.balance() < 10) {
            return false;
        }
        session.store("accounts/3", new Account(from.balance() - 10));
        session.store("accounts/4", new Account(to.balance() + 10));
        return true;
    }

    protected static void assertTrue(boolean condition) {
        Assertions.assertTrue(condition);
    }
}
