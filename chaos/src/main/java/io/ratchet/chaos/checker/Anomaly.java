package io.ratchet.chaos.checker;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.List;

/**
 * One thing a checker found wrong.
 *
 * @param workload the workload whose invariant broke
 * @param type     a short name, e.g. {@code not-linearizable}, {@code double-reservation}
 * @param key      the item or lock concerned, if any
 * @param detail   what happened, in a sentence
 * @param ops      the history indexes of the lines that show it
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"workload", "type", "key", "detail", "ops"})
public record Anomaly(String workload, String type, String key, String detail, List<Long> ops) {
    public Anomaly {
        ops = ops == null ? List.of() : List.copyOf(ops);
    }

    @Override
    public String toString() {
        return workload + " " + type + (key == null ? "" : " " + key) + ": " + detail
                + (ops.isEmpty() ? "" : " (history lines " + ops + ")");
    }
}
