package io.ratchet.chaos.history;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * One line of a history: an invocation or a completion.
 *
 * @param index    the line's position in the history; invocations and completions are numbered in the
 *                 order they happened, so {@code index} orders them in real time
 * @param time     nanoseconds since the run started, on the harness' monotonic clock
 * @param process  who did it: a client process number, {@code nemesis}, {@code setup} or {@code final}.
 *                 A process has at most one operation open; after an unknown outcome it gets a new
 *                 number, because its old operation may still take effect at any later time
 * @param type     invoke, or how the operation completed
 * @param workload the workload the operation belongs to, or {@code nemesis}
 * @param f        the operation's name: {@code read}, {@code put}, {@code acquire}, {@code kill}, ...
 * @param key      the item the operation is about, if any
 * @param input    what was asked (repeated on the completion, so each line reads on its own)
 * @param output   what came back, on an {@code ok} completion
 * @param error    why a {@code fail} or {@code info} completion has no answer
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"index", "time", "process", "type", "workload", "f", "key", "input", "output", "error"})
public record Op(long index, long time, String process, OpType type, String workload, String f, String key,
                 JsonNode input, JsonNode output, String error) {

    @JsonIgnore
    public boolean isInvoke() {
        return type == OpType.INVOKE;
    }

    /** A short human form for reports: {@code #12 p3 ok put register/k1 {"index":4,"value":7} -> {...}}. */
    public String describe() {
        String who = !process.isEmpty() && process.chars().allMatch(Character::isDigit) ? "p" + process : process;
        StringBuilder s = new StringBuilder().append('#').append(index).append(' ').append(who).append(' ')
                .append(type.json()).append(' ').append(f);
        if (key != null) {
            s.append(' ').append(key);
        }
        if (input != null && !input.isEmpty()) {
            s.append(' ').append(input);
        }
        if (output != null) {
            s.append(" -> ").append(output);
        }
        if (error != null) {
            s.append(" (").append(error).append(')');
        }
        return s.toString();
    }
}
