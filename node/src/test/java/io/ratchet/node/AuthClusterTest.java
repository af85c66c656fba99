package io.ratchet.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.AuthenticationException;
import io.ratchet.client.ClientOptions;
import io.ratchet.client.ClusterAdmin;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.PermissionDeniedException;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.backup.Backups;
import io.ratchet.protocol.AuthTable;
import io.ratchet.protocol.AuthTable.Permission;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Command.AuthChange;
import io.ratchet.statemachine.RatchetStateMachine;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Authentication and permissions on a real in-process cluster: who has no token or a wrong one is
 * refused and nothing reaches the log; a user limited to a prefix writes there and nowhere else, also
 * inside a transaction, which then writes nothing; a read-only role cannot write; a removed user's token
 * stops working at once; only an administrator changes membership, takes backups or changes permissions.
 */
class AuthClusterTest {
    @TempDir
    Path dir;

    /** On a TLS cluster, as deployed: clients trust the cluster's CA and show no certificate, only a token. */
    @Test
    void usersArePermittedByPrefixAndEverythingElseIsRefusedBeforeTheLog() throws Exception {
        CertificateAuthority ca = CertificateAuthority.create(dir, "cluster-ca");
        try (LocalCluster cluster = LocalCluster.startTls(3, dir.resolve("nodes"), ca)) {
            RatchetClient open = cluster.client();
            assertRefused(InvalidRequestException.class, () -> open.changeAuth(new AuthChange.Enable(true)),
                    "needs a user with admin on every key");
            String rootToken = open.addUser("root", List.of(AuthTable.ROOT));
            open.changeAuth(new AuthChange.Grant("orders", Permission.WRITE, "orders/"));
            open.changeAuth(new AuthChange.Grant("reader", Permission.READ, ""));
            String shopToken = open.addUser("shop", List.of("orders"));
            String viewerToken = open.addUser("viewer", List.of("reader"));
            assertFalse(open.authStatus().enabled());
            assertTrue(open.changeAuth(new AuthChange.Enable(true)).enabled());

            RatchetClient root = client(cluster, rootToken);
            RatchetClient shop = client(cluster, shopToken);
            RatchetClient viewer = client(cluster, viewerToken);
            String leader = cluster.awaitLeader();
            // A fresh cluster's leader proposes the configured quota once (QuotaBootstrap): a log entry of
            // its own, which must not land among the refused writes below.
            await().atMost(Duration.ofSeconds(10)).until(
                    () -> ((RatchetStateMachine) cluster.division(leader).getStateMachine()).quotaSet());
            long committed = cluster.division(leader).getRaftLog().getLastCommittedIndex();

            assertRefused(AuthenticationException.class, () -> open.put("orders/0", "1", 0), "give a token");
            assertRefused(AuthenticationException.class, () -> client(cluster, "wrong").put("orders/0", "1", 0),
                    "names no user");
            assertRefused(AuthenticationException.class, () -> open.get("orders/0"), "give a token");
            assertEquals(committed, cluster.division(leader).getRaftLog().getLastCommittedIndex(),
                    "refused writes never reach the log");

            assertTrue(shop.put("orders/1", "1", 0).successful());
            assertRefused(PermissionDeniedException.class, () -> shop.put("emails/a", "1", 0),
                    "user 'shop' has no write permission on 'emails/a'");
            assertRefused(PermissionDeniedException.class, () -> shop.transaction(List.of(
                    new Command.Put("orders/2", "2", 0, null), new Command.Put("emails/b", "2", 0, null))), "'emails/b'");
            assertTrue(root.get("orders/2").isEmpty(), "the transaction wrote nothing");

            assertTrue(viewer.get("orders/1").isPresent(), "a read-only role reads");
            assertRefused(PermissionDeniedException.class, () -> viewer.put("orders/3", "3", 0), "no write permission");
            assertRefused(PermissionDeniedException.class, () -> shop.setQuota(64L << 20), "not an administrator");

            try (ClusterAdmin viewerAdmin = ClusterAdmin.connect(options(cluster, viewerToken))) {
                assertEquals(3, viewerAdmin.members().members().size(), "any user reads the membership");
                assertRefused(PermissionDeniedException.class, () -> viewerAdmin.removeMember("n3"), "not an administrator");
            }
            assertRefused(PermissionDeniedException.class,
                    () -> Backups.save(options(cluster, viewerToken), dir.resolve("backup")), "not an administrator");
            assertRefused(PermissionDeniedException.class,
                    () -> viewer.changeAuth(new AuthChange.Grant("reader", Permission.ADMIN, "")), "not an administrator");

            root.changeAuth(new AuthChange.RemoveUser("shop"));
            assertRefused(AuthenticationException.class, () -> shop.put("orders/4", "4", 0), "names no user");
            // A read served by a follower is checked after its barrier: the removal is applied there by then.
            String follower = cluster.nodeIds().stream().filter(id -> !id.equals(cluster.awaitLeader())).findFirst().orElseThrow();
            RatchetClient viaFollower = cluster.client(ClientOptions.parse(follower + "=" + cluster.address(follower))
                    .withCredentials(cluster.options().credentials().withToken(shopToken)));
            assertRefused(AuthenticationException.class, () -> viaFollower.get("orders/1"), "names no user");
            assertEquals(List.of("root", "viewer"), List.copyOf(root.authStatus().users().keySet()));
        }
    }

    @Test
    void overHttpNoTokenIs401AMissingPermission403AndAPermittedWriteGoesThrough() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            RatchetClient open = cluster.client();
            open.addUser("root", List.of(AuthTable.ROOT));
            open.changeAuth(new AuthChange.Grant("orders", Permission.WRITE, "orders/"));
            String shopToken = open.addUser("shop", List.of("orders"));
            open.changeAuth(new AuthChange.Enable(true));
            String url = cluster.httpUrl("n2");

            HttpResponse<String> anonymous = put(url + "/v1/items/orders/9", null);
            assertEquals(401, anonymous.statusCode(), anonymous.body());
            assertEquals("Bearer", anonymous.headers().firstValue("WWW-Authenticate").orElse(null));
            HttpResponse<String> elsewhere = put(url + "/v1/items/emails/x", shopToken);
            assertEquals(403, elsewhere.statusCode(), elsewhere.body());
            assertTrue(elsewhere.body().contains("no write permission on 'emails/x'"), elsewhere.body());
            assertEquals(201, put(url + "/v1/items/orders/9", shopToken).statusCode());
            HttpResponse<String> stale = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create(url + "/v1/items/orders/9?stale=true")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(401, stale.statusCode(), "a stale read of the node's own state is checked too");
        }
    }

    private static HttpResponse<String> put(String url, String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).header("If-None-Match", "*")
                .PUT(HttpRequest.BodyPublishers.ofString("1"));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void assertRefused(Class<? extends Exception> type, Executable call, String why) {
        Exception e = assertThrows(type, call);
        assertTrue(e.getMessage().contains(why), e.getMessage());
    }

    private static ClientOptions options(LocalCluster cluster, String token) {
        return cluster.options().withCredentials(cluster.options().credentials().withToken(token));
    }

    private static RatchetClient client(LocalCluster cluster, String token) {
        return cluster.client(options(cluster, token));
    }
}
