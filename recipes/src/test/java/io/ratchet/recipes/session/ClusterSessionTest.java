package io.ratchet.recipes.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Result;
import io.ratchet.recipes.OnInProcessCluster;
import io.ratchet.testing.InProcessCluster;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What a session sends, and when it refuses to go on; through the client, against {@link InProcessCluster}. */
@Timeout(30)
class ClusterSessionTest extends OnInProcessCluster {
    /** Lost answers that make the client give up on a write it delivered: one for each of its attempts. */
    private static final int UNANSWERED = InProcessCluster.options().maxAttempts();

    @BeforeEach
    void start() {
        client.put("warm-up", 0, 0); // opens the client's session, so the answers dropped below are the saves'
    }

    private ClusterSession session() {
        return ClusterSession.open(client);
    }

    record Customer(String name, String tier) {
    }

    @Test
    void aSaveIsOneTransactionConditionedOnTheIndexesTheSessionRead() {
        long ada = cluster.putDocument("customers/1", "{\"name\":\"Ada\",\"tier\":\"silver\"}");
        long bob = cluster.putDocument("customers/2", "{\"name\":\"Bob\"}");
        long stock = cluster.putItem("stock/widgets", "10");

        ClusterSession session = session();
        Customer customer = session.load(Customer.class, "customers/1").orElseThrow();
        session.store("customers/1", new Customer(customer.name(), "gold"));
        session.load("customers/2").orElseThrow();
        session.delete("customers/2");
        session.store("customers/3", Map.of("name", "Cy"));
        assertEquals(10, session.compareExchange().get("stock/widgets").orElseThrow().valueNode().asInt());
        session.compareExchange().update("stock/widgets", 9);
        session.compareExchange().create("emails/cy@example.com", "customers/3");

        long index = session.saveChanges();

        assertEquals(List.of(List.of(
                new Command.PutDocument("customers/1", "{\"name\":\"Ada\",\"tier\":\"gold\"}", ada),
                new Command.DeleteDocument("customers/2", bob),
                new Command.PutDocument("customers/3", "{\"name\":\"Cy\"}", 0),
                new Command.Put("stock/widgets", "9", stock, null),
                new Command.Put("emails/cy@example.com", "\"customers/3\"", 0, null))), cluster.transactionsSent());
        assertEquals(index, cluster.document("customers/1").orElseThrow().index());
        assertEquals(index, session.guardIndex("customers/3"), "the session goes on from what it saved");
    }

    @Test
    void whatTheSessionOnlyReadIsCheckedOnlyWhenAskedFor() {
        long rules = cluster.putDocument("config/rules", "{\"max\":3}");
        long limit = cluster.putItem("limits/orders", "3");

        ClusterSession plain = session();
        plain.load("config/rules");
        plain.compareExchange().get("limits/orders");
        plain.store("orders/1", Map.of("n", 1));
        plain.saveChanges();
        assertEquals(List.of(new Command.PutDocument("orders/1", "{\"n\":1}", 0)), cluster.transactionsSent().get(0));

        ClusterSession validating = ClusterSession.open(client, SessionOptions.defaults().withReadValidation());
        validating.load("config/rules");
        validating.load("config/absent");
        validating.compareExchange().get("limits/orders");
        validating.store("orders/2", Map.of("n", 2));
        validating.saveChanges();
        assertEquals(List.of(
                new Command.PutDocument("orders/2", "{\"n\":2}", 0),
                new Command.Check("rvn-atomic/config/rules", rules),
                new Command.Check("rvn-atomic/config/absent", 0),
                new Command.Check("limits/orders", limit)), cluster.transactionsSent().get(1));
    }

    @Test
    void aSaveRefusedBecauseAGuardMovedNamesItAndLeavesTheSessionUnusable() {
        long loaded = cluster.putDocument("customers/42", "{\"tier\":\"silver\"}");
        ClusterSession session = session();
        session.load("customers/42");
        long moved = cluster.putDocument("customers/42", "{\"tier\":\"gold\"}");
        session.store("customers/42", Map.of("tier", "bronze"));

        ConcurrencyException e = assertThrows(ConcurrencyException.class, session::saveChanges);
        assertEquals(List.of(new Result.Conflict("rvn-atomic/customers/42", loaded, moved)), e.conflicts());
        assertTrue(e.getMessage().contains("document 'customers/42'"), e.getMessage());
        assertEquals("{\"tier\":\"gold\"}", cluster.document("customers/42").orElseThrow().json(), "nothing applied");

        assertThrows(IllegalStateException.class, () -> session.load("customers/42"));
        assertThrows(IllegalStateException.class, () -> session.store("customers/42", Map.of()));
        assertThrows(IllegalStateException.class, session::saveChanges);
        assertThrows(IllegalStateException.class, session::compareExchange);
    }

    @Test
    void eachDocumentIsReadOnceAndTheSessionSeesItsOwnChanges() {
        cluster.putDocument("notes/1", "{\"text\":\"a\"}");
        ClusterSession session = session();
        session.load("notes/1");
        session.load("NOTES/1");
        assertEquals(1, cluster.readCalls().size(), "a repeatable read: the second load is served by the session");

        session.store("notes/1", Map.of("text", "b"));
        assertEquals("b", session.load("notes/1").orElseThrow().get("text").asText());
        session.delete("notes/1");
        assertTrue(session.load("notes/1").isEmpty());
        assertEquals(1, cluster.readCalls().size());

        session.store("notes/1", Map.of("text", "c"));
        long first = session.saveChanges();
        session.store("notes/1", Map.of("text", "d"));
        long second = session.saveChanges();
        assertTrue(second > first, "a second save is conditioned on the first one's index and succeeds");
        assertEquals(0, session.saveChanges(), "nothing left to save: nothing sent");
        assertEquals(2, cluster.transactionsSent().size());
    }

    @Test
    void deletesAndUpdatesNeedTheIndexOfARead() {
        ClusterSession session = session();
        assertThrows(IllegalStateException.class, () -> session.delete("customers/9"));
        assertThrows(IllegalStateException.class, () -> session.compareExchange().update("k", 1));
        assertThrows(IllegalStateException.class, () -> session.compareExchange().delete("k"));
        assertTrue(session.compareExchange().get("k").isEmpty());
        assertThrows(IllegalStateException.class, () -> session.compareExchange().update("k", 1), "absent: create it");

        session.store("drafts/1", Map.of());
        session.delete("drafts/1");
        assertFalse(session.hasChanges(), "deleting a document only stored in this session cancels the store");
    }

    @Test
    void aDocumentMustBeAJsonObjectAndGuardsAreNotItems() {
        ClusterSession session = session();
        assertThrows(InvalidRequestException.class, () -> session.store("customers/1", List.of(1, 2)));
        assertThrows(InvalidRequestException.class, () -> session.store("", Map.of()));
        assertThrows(InvalidRequestException.class, () -> session.compareExchange().create("rvn-atomic/customers/1", "x"));
        assertFalse(session.hasChanges());
    }

    @Test
    void aSaveWhoseAnswerWasLostIsResentWithItsKeyAndAppliedOnce() {
        ClusterSession session = session();
        session.store("orders/7", Map.of("total", 70));
        cluster.dropAnswers(UNANSWERED); // applied; the answers to it and the client's resends are lost
        assertThrows(UnknownOutcomeException.class, () -> session.saveChanges("save-orders/7", Duration.ofMinutes(1)));
        assertThrows(IllegalStateException.class, () -> session.store("orders/8", Map.of()), "only a resend is safe now");
        assertThrows(IllegalStateException.class, () -> session.saveChanges("another-key", Duration.ofMinutes(1)));

        long index = session.saveChanges("save-orders/7", Duration.ofMinutes(1));
        assertEquals(cluster.document("orders/7").orElseThrow().index(), index, "the resend returns the first outcome");
        assertEquals(1, cluster.transactionsCommitted());
        session.store("orders/8", Map.of("total", 80));
        assertTrue(session.saveChanges() > index, "after the resend settles it, the session goes on");
    }

    @Test
    void aSaveWithoutAKeyWhoseAnswerWasLostLeavesTheSessionUnusable() {
        ClusterSession session = session();
        session.store("orders/7", Map.of("total", 70));
        cluster.dropAnswers(UNANSWERED);
        assertThrows(UnknownOutcomeException.class, session::saveChanges);
        assertEquals(1, cluster.transactionsCommitted(), "it was applied: only its answers were lost");
        assertThrows(IllegalStateException.class, session::saveChanges, "read first: a blind resend is not safe");
    }

    @Test
    void aJsonTreeLoadsAndStoresAsIs() {
        cluster.putDocument("trees/1", "{\"a\":{\"b\":[1,2]}}");
        ClusterSession session = session();
        JsonNode tree = session.load(JsonNode.class, "trees/1").orElseThrow();
        assertEquals(2, tree.at("/a/b/1").asInt());
        session.store("trees/1", tree);
        session.saveChanges();
        assertEquals("{\"a\":{\"b\":[1,2]}}", cluster.document("trees/1").orElseThrow().json());
    }
}
