package io.ratchet.chaos.history;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HistoryTest {

    @Test
    void aHistoryFileReadsBackLineForLine(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("history.jsonl");
        List<Op> written;
        try (History history = History.toFile(file)) {
            Op put = history.invoke("3", "register", "put", "register/k1", History.object().put("index", 0).put("value", 7));
            history.ok(put, History.object().put("successful", true).put("index", 12));
            Op read = history.invoke("4", "register", "read", "register/k1", History.object());
            history.info(read, "UnknownOutcomeException: timed out");
            written = history.ops();
        }
        assertEquals(4, Files.readAllLines(file).size(), "one JSON line per invocation and completion");
        List<Op> read = History.read(file);
        assertEquals(written, read);
        assertTrue(read.get(1).time() >= read.get(0).time(), "times are monotonic");
        assertEquals(OpType.INFO, read.get(3).type());
        assertTrue(Files.readAllLines(file).get(0).startsWith("{\"index\":0,\"time\":"));
    }

    @Test
    void pairingMatchesEachInvocationWithItsProcessNextCompletion() {
        Script s = new Script("register");
        Op a = s.invoke("1", "read", "k", "{}");
        Op b = s.invoke("2", "put", "k", "{\"index\":0,\"value\":1}");
        s.ok(a, "{\"index\":0}");
        s.invoke("1", "read", "k", "{}");
        s.info(b);
        List<Operation> ops = Operation.pair(s.ops());
        assertEquals(3, ops.size());
        assertTrue(ops.get(0).ok());
        assertTrue(ops.get(1).unknown());
        assertEquals(Long.MAX_VALUE, ops.get(1).returnIndex(), "an unknown outcome stays open to the end");
        assertNull(ops.get(2).completion(), "never completed");
        assertTrue(ops.get(2).unknown());
    }

    @Test
    void aProcessWithTwoOpenOperationsIsAMalformedHistory() {
        Script s = new Script("register");
        s.invoke("1", "read", "k", "{}");
        s.invoke("1", "read", "k", "{}");
        assertThrows(IllegalArgumentException.class, () -> Operation.pair(s.ops()));
    }
}
