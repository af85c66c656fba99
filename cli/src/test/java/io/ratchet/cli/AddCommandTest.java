package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.node.LocalCluster;
import io.ratchet.protocol.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ratchet add}: what a user types, against a real in-process cluster, printed as put prints. */
class AddCommandTest {
    @TempDir
    Path dir;

    private record Run(int code, String out, String err) {
        JsonNode json() {
            String[] lines = out.strip().split("\n");
            return Json.parse(lines[lines.length - 1]);
        }
    }

    private static Run on(String peers, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--peers", peers, "--json"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), all.toArray(String[]::new));
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void addsCountFromZeroTakeNegativeDeltasCountOnceUnderAKeyAndRefuseText() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            String peers = cluster.peers();
            Run first = on(peers, "add", "counters/views", "5");
            assertEquals(ExitCode.DONE, first.code(), first.toString());
            JsonNode added = first.json();
            assertTrue(added.get("successful").asBoolean());
            assertEquals("counters/views", added.get("key").asText());
            assertEquals(5, added.get("value").asLong());
            assertTrue(added.get("index").asLong() > 0);

            Run down = on(peers, "add", "counters/views", "-7");
            assertEquals(ExitCode.DONE, down.code(), down.toString());
            assertEquals(-2, down.json().get("value").asLong());

            Run once = on(peers, "add", "counters/views", "10", "--idempotency-key", "batch-1");
            Run again = on(peers, "add", "counters/views", "10", "--idempotency-key", "batch-1");
            assertEquals(once.json(), again.json(), "sent again under its key: the first outcome");
            assertEquals(8, again.json().get("value").asLong());

            Run put = on(peers, "put", "profile", "\"ada\"", "--index", "0");
            assertEquals(ExitCode.DONE, put.code(), put.toString());
            Run text = on(peers, "add", "profile", "1");
            assertEquals(1, text.code(), text.toString());
            JsonNode error = text.json();
            assertEquals("not_an_integer", error.get("code").asText());
            assertTrue(error.get("message").asText().contains("\"ada\""), error.toString());
        }
    }
}
