package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.node.LocalCluster;
import io.ratchet.protocol.Json;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ratchet user}, {@code role} and {@code auth}, and the exit codes of a refused caller. */
class AuthCommandsTest {
    @TempDir
    Path dir;

    @Test
    void usersRolesAndExitCodesForNoTokenAndNoPermission() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            String peers = cluster.peers();
            assertEquals(ExitCode.INVALID, run("auth", "enable", "--peers", peers).code(), "no administrator yet");
            String root = token(run("user", "add", "root", "--role", "root", "--json", "--peers", peers));
            assertEquals(ExitCode.DONE, run("role", "grant", "orders", "write", "orders/", "--peers", peers).code());
            String shop = token(run("user", "add", "shop", "--role", "orders", "--json", "--peers", peers));
            assertEquals(ExitCode.DONE, run("auth", "enable", "--peers", peers).code());

            CommandRun anonymous = run("put", "orders/1", "1", "--index", "0", "--peers", peers);
            assertEquals(ExitCode.UNAUTHENTICATED, anonymous.code(), anonymous.toString());
            assertEquals(ExitCode.DONE, run("put", "orders/1", "1", "--index", "0", "--token", shop, "--peers", peers).code());
            CommandRun elsewhere = run("put", "emails/a", "1", "--index", "0", "--token", shop, "--json", "--peers", peers);
            assertEquals(ExitCode.FORBIDDEN, elsewhere.code(), elsewhere.toString());
            assertEquals("forbidden", Json.parse(elsewhere.out()).get("error").asText());
            assertTrue(elsewhere.err().contains("no write permission on 'emails/a'"), elsewhere.err());
            assertEquals(ExitCode.FORBIDDEN, run("user", "remove", "root", "--token", shop, "--peers", peers).code());

            CommandRun status = run("auth", "status", "--json", "--token", root, "--peers", peers);
            JsonNode table = Json.parse(status.out());
            assertTrue(table.get("enabled").asBoolean());
            assertEquals("orders", table.get("users").get("shop").get(0).asText());
            assertEquals("write", table.get("roles").get("orders").get(0).get("permission").asText());
            assertEquals(ExitCode.DONE, run("user", "remove", "shop", "--token", root, "--peers", peers).code());
            assertEquals(ExitCode.UNAUTHENTICATED, run("get", "orders/1", "--token", shop, "--peers", peers).code());
        }
    }

    private static CommandRun run(String... args) {
        return CommandRun.of(args);
    }

    private static String token(CommandRun added) {
        assertEquals(ExitCode.DONE, added.code(), added.toString());
        return Json.parse(added.out()).get("token").asText();
    }
}
