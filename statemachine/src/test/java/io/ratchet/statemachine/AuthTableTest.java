package io.ratchet.statemachine;

import static io.ratchet.statemachine.CompareExchangeStoreTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.protocol.AuthTable;
import io.ratchet.protocol.AuthTable.Permission;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Command.AuthChange;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The permission table as replicated state: applied alike, refused whole, kept in snapshots. */
class AuthTableTest {
    private static final String ROOT_TOKEN = "root-token";
    private static final String ORDERS_TOKEN = "orders-token";

    @TempDir
    Path dir;

    private long index;
    private long stamp = 1_000;

    private Result apply(CompareExchangeStore store, Command command) {
        return store.applyEntry(entry(stamp++, command), ++index).get(0);
    }

    private CompareExchangeStore storeWithUsers() {
        CompareExchangeStore store = new CompareExchangeStore();
        apply(store, new AuthChange.Grant("orders", Permission.WRITE, "orders/"));
        apply(store, new AuthChange.Grant("reader", Permission.READ, ""));
        apply(store, new AuthChange.AddUser("root", AuthTable.tokenHash(ROOT_TOKEN), List.of(AuthTable.ROOT)));
        apply(store, new AuthChange.AddUser("shop", AuthTable.tokenHash(ORDERS_TOKEN), List.of("orders")));
        assertInstanceOf(Result.AuthState.class, apply(store, new AuthChange.Enable(true)));
        return store;
    }

    @Test
    void grantsNestByPermissionAndCoverTheirPrefixCaseInsensitivelyAndGuardsFollowTheirDocument() {
        AuthTable t = storeWithUsers().auth();
        AuthTable.User shop = t.userByTokenHash(AuthTable.tokenHash(ORDERS_TOKEN));
        assertEquals("shop", shop.name());
        assertTrue(t.allows(shop, Permission.WRITE, "orders/1"));
        assertTrue(t.allows(shop, Permission.READ, "ORDERS/2"), "write covers read; keys compare case-insensitively");
        assertTrue(t.allows(shop, Permission.WRITE, "rvn-atomic/orders/7"), "a document's guard follows the document");
        assertFalse(t.allows(shop, Permission.WRITE, "emails/a"));
        assertFalse(t.allows(shop, Permission.ADMIN, "orders/1"));
        assertFalse(t.isAdmin(shop));
        assertTrue(t.isAdmin(t.users().get("root")));
        assertEquals(null, t.userByTokenHash(AuthTable.tokenHash("wrong")));
    }

    @Test
    void enablingWithoutAnAdministratorAndRemovingTheLastOneAreRefusedAndChangeNothing() {
        CompareExchangeStore store = new CompareExchangeStore();
        apply(store, new AuthChange.AddUser("shop", AuthTable.tokenHash(ORDERS_TOKEN), List.of("orders")));
        Result refused = apply(store, new AuthChange.Enable(true));
        assertTrue(((Result.Rejected) refused).reason().contains("needs a user with admin"), refused.toString());
        assertFalse(store.auth().enabled());

        CompareExchangeStore on = storeWithUsers();
        AuthTable before = on.auth();
        Result last = apply(on, new AuthChange.RemoveUser("root"));
        assertTrue(((Result.Rejected) last).reason().contains("no user with admin"), last.toString());
        assertEquals(before, on.auth());
        assertInstanceOf(Result.Rejected.class, apply(on, new AuthChange.AddUser("shop", AuthTable.tokenHash("x"), List.of())));
        assertInstanceOf(Result.Rejected.class, apply(on, new AuthChange.Revoke("orders", Permission.READ, "orders/")));
        assertEquals(before, on.auth());
    }

    @Test
    void removingAUserEndsItsTokenAndTheAnswerNeverCarriesTokenHashes() {
        CompareExchangeStore store = storeWithUsers();
        Result.AuthState state = (Result.AuthState) apply(store, new AuthChange.RemoveUser("shop"));
        assertEquals(null, store.auth().userByTokenHash(AuthTable.tokenHash(ORDERS_TOKEN)));
        assertFalse(state.table().users().containsKey("shop"));
        state.table().users().values().forEach(u -> assertEquals("", u.tokenHash()));
    }

    @Test
    void theTableSurvivesASnapshotAndTheWireAndTwoReplicasAgree() throws IOException {
        CompareExchangeStore store = storeWithUsers();
        Path file = dir.resolve("snapshot");
        SnapshotFile.write(store, file);
        assertEquals(store.auth(), SnapshotFile.read(file).auth());

        List<Request> requests = List.of(Request.of(List.of(new AuthChange.Grant("r", Permission.ADMIN, "a/"),
                new AuthChange.Revoke("r", Permission.ADMIN, "a/"), new AuthChange.RemoveUser("u"),
                new AuthChange.Enable(false), new AuthChange.AddUser("u", AuthTable.tokenHash("t"), List.of("r")))));
        assertEquals(requests, Codec.decodeRequests(Codec.encodeRequests(requests)));

        CompareExchangeStore replica = storeWithUsers();
        assertEquals(store.auth(), replica.auth());
    }

    @Test
    void aMalformedChangeIsRejectedByValidation() {
        CompareExchangeStore store = new CompareExchangeStore();
        assertInstanceOf(Result.Rejected.class, apply(store, new AuthChange.AddUser("bad name", AuthTable.tokenHash("t"), List.of())));
        assertInstanceOf(Result.Rejected.class, apply(store, new AuthChange.AddUser("u", "not-a-hash", List.of())));
        assertInstanceOf(Result.Rejected.class, apply(store, new AuthChange.Grant(AuthTable.ROOT, Permission.READ, "")));
        assertEquals(AuthTable.EMPTY, store.auth());
    }
}
