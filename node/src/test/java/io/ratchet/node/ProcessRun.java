package io.ratchet.node;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.protocol.Json;
import java.io.IOException;

/** A command run in a process of its own, to its end: its exit code and what it printed on each stream. */
public record ProcessRun(int code, String out, String err) {
    /** What it printed on stdout, read as JSON (its {@code --json} answer). */
    public JsonNode json() {
        try {
            return Json.MAPPER.readTree(out);
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + this, e);
        }
    }

    @Override
    public String toString() {
        return "exit " + code + "\nstdout: " + out + "\nstderr: " + err;
    }
}
