package io.ratchet.chaos.history;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The record of a run: every operation's invocation and completion, numbered and timed in the order
 * they happened. Thread-safe. Each line is also appended to a JSON-lines file as it happens, so a
 * history survives a harness that dies.
 *
 * <p>The caller records an invocation before it sends a request and the completion after the answer
 * arrives, so the recorded interval contains the real one: a checker that orders by {@link Op#index()}
 * never sees two operations as ordered when they could have overlapped.
 */
public final class History implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();

    private final LongSupplier clock;
    private final long origin;
    private final BufferedWriter file;
    private final List<Op> ops = new ArrayList<>();

    private History(LongSupplier clock, BufferedWriter file) {
        this.clock = clock;
        this.origin = clock.getAsLong();
        this.file = file;
    }

    /** A history kept in memory only, timed by {@link System#nanoTime()}. */
    public static History inMemory() {
        return new History(System::nanoTime, null);
    }

    /** A history kept in memory, timed by {@code nanoClock}: tests use it to write histories by hand. */
    public static History inMemory(LongSupplier nanoClock) {
        return new History(nanoClock, null);
    }

    /** A history that is also written to {@code path} as JSON lines. */
    public static History toFile(Path path) throws IOException {
        return new History(System::nanoTime, Files.newBufferedWriter(path, StandardCharsets.UTF_8));
    }

    /** Records that {@code process} invokes {@code f}; complete the returned op with {@link #ok}, {@link #fail} or {@link #info}. */
    public Op invoke(String process, String workload, String f, String key, JsonNode input) {
        return append(process, OpType.INVOKE, workload, f, key, input, null, null);
    }

    public Op ok(Op invoke, JsonNode output) {
        return complete(invoke, OpType.OK, output, null);
    }

    /** The operation certainly had no effect. */
    public Op fail(Op invoke, String error) {
        return complete(invoke, OpType.FAIL, null, error);
    }

    /** The operation got no answer: it may or may not have taken effect. */
    public Op info(Op invoke, String error) {
        return complete(invoke, OpType.INFO, null, error);
    }

    private Op complete(Op invoke, OpType type, JsonNode output, String error) {
        if (!invoke.isInvoke()) {
            throw new IllegalArgumentException("only an invocation can be completed, not " + invoke.describe());
        }
        return append(invoke.process(), type, invoke.workload(), invoke.f(), invoke.key(), invoke.input(), output, error);
    }

    private synchronized Op append(String process, OpType type, String workload, String f, String key,
                                   JsonNode input, JsonNode output, String error) {
        Op op = new Op(ops.size(), clock.getAsLong() - origin, process, type, workload, f, key, input, output, error);
        // The file first: an operation the file refused (after close, say) must not reach the checkers either.
        if (file != null) {
            try {
                file.write(JSON.writeValueAsString(op));
                file.newLine();
                file.flush();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the history", e);
            }
        }
        ops.add(op);
        return op;
    }

    /** Every line so far, in order. */
    public synchronized List<Op> ops() {
        return List.copyOf(ops);
    }

    /** Reads a history written by {@link #toFile}. */
    public static List<Op> read(Path path) throws IOException {
        List<String> lines = Files.readAllLines(path, StandardCharsets.UTF_8).stream().filter(line -> !line.isBlank()).toList();
        List<Op> ops = new ArrayList<>(lines.size());
        for (int i = 0; i < lines.size(); i++) {
            try {
                ops.add(JSON.readValue(lines.get(i), Op.class));
            } catch (IOException e) {
                // The history of a run still going may end in a line half written; any other bad line is an error.
                if (i < lines.size() - 1 || endsWithNewline(path)) {
                    throw e;
                }
            }
        }
        return ops;
    }

    private static boolean endsWithNewline(Path path) throws IOException {
        try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "r")) {
            if (file.length() == 0) {
                return false;
            }
            file.seek(file.length() - 1);
            return file.read() == '\n';
        }
    }

    /** An empty JSON object, for building inputs and outputs. */
    public static ObjectNode object() {
        return JSON.createObjectNode();
    }

    /** {@code value} as a JSON tree (a record, a map, a number, ...). */
    public static JsonNode tree(Object value) {
        return JSON.valueToTree(value);
    }

    @Override
    public synchronized void close() throws IOException {
        if (file != null) {
            file.close();
        }
    }
}
