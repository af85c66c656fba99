package io.ratchet.chaos.history;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;

/**
 * A history written by hand for checker tests: lines get consecutive indexes and a clock that moves
 * one millisecond a line, unless a test sets it. Inputs and outputs are JSON text, as they appear in a
 * history file.
 */
public final class Script {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String workload;
    private long nanos;
    private final History history = History.inMemory(() -> nanos);

    public Script(String workload) {
        this.workload = workload;
    }

    /** Moves the clock to {@code millis} after the start. */
    public Script at(long millis) {
        nanos = millis * 1_000_000;
        return this;
    }

    public Op invoke(String process, String f, String key, String input) {
        return history.invoke(process, workload, f, key, json(input));
    }

    public Op ok(Op invoke, String output) {
        tick();
        return history.ok(invoke, json(output));
    }

    public Op fail(Op invoke) {
        tick();
        return history.fail(invoke, "no answer");
    }

    /** A completion without an answer for {@code error}, written as a client process writes it: {@code Type: message}. */
    public Op fail(Op invoke, String error) {
        tick();
        return history.fail(invoke, error);
    }

    public Op info(Op invoke) {
        tick();
        return history.info(invoke, "UnknownOutcomeException: timed out");
    }

    /** Invokes and completes at once: an operation that overlapped nothing. */
    public Op call(String process, String f, String key, String input, String output) {
        return ok(invoke(process, f, key, input), output);
    }

    public List<Op> ops() {
        return history.ops();
    }

    private void tick() {
        nanos += 1_000_000;
    }

    private static JsonNode json(String text) {
        try {
            return text == null ? null : JSON.readTree(text);
        } catch (Exception e) {
            throw new IllegalArgumentException("bad JSON in a test: " + text, e);
        }
    }
}
