package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.chaos.history.History;
import io.ratchet.chaos.history.Op;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import java.util.Random;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One client process of a workload: its own connection, its id in the history, its random source. It
 * runs one operation at a time and records each as an invocation and a completion.
 *
 * <p>After a write with an unknown outcome the process takes a new id, as in Jepsen: the old operation
 * may still take effect at any later time, so it stays open in the history, and a process has at most
 * one operation open.
 */
public final class ClientProcess {
    private final History history;
    private final String workload;
    private final Supplier<String> ids;
    private final RatchetClient client;
    private final Random random;
    private String id;

    public ClientProcess(History history, String workload, Supplier<String> ids, RatchetClient client, Random random) {
        this.history = history;
        this.workload = workload;
        this.ids = ids;
        this.client = client;
        this.random = random;
        this.id = ids.get();
    }

    public String id() {
        return id;
    }

    public RatchetClient client() {
        return client;
    }

    public Random random() {
        return random;
    }

    /**
     * Runs and records an operation that may change the cluster. {@code call} must throw
     * {@link ClusterUnavailableException} only when nothing it sent can have taken effect (a read before
     * its first write, say: the client's writes never throw it), because that is recorded as a failure.
     * Any other error but {@link InvalidRequestException} is recorded as an unknown outcome.
     */
    public <T> Outcome<T> write(String f, String key, JsonNode input, Supplier<T> call, Function<? super T, JsonNode> output) {
        Op invoke = history.invoke(id, workload, f, key, input);
        T value;
        try {
            value = call.get();
        } catch (InvalidRequestException | ClusterUnavailableException e) {
            history.fail(invoke, describe(e));
            return Outcome.failure();
        } catch (RuntimeException e) {
            history.info(invoke, describe(e));
            id = ids.get();
            return Outcome.noAnswer();
        }
        history.ok(invoke, output.apply(value));
        return Outcome.answered(value);
    }

    /** Runs and records an operation that changes nothing: any error is a failure. */
    public <T> Outcome<T> read(String f, String key, JsonNode input, Supplier<T> call, Function<? super T, JsonNode> output) {
        Op invoke = history.invoke(id, workload, f, key, input);
        T value;
        try {
            value = call.get();
        } catch (RuntimeException e) {
            history.fail(invoke, describe(e));
            return Outcome.failure();
        }
        history.ok(invoke, output.apply(value));
        return Outcome.answered(value);
    }

    private static String describe(RuntimeException e) {
        String message = e.getMessage();
        return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
}
