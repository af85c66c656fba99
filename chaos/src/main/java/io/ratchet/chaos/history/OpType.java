package io.ratchet.chaos.history;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * What a history line records, as in Jepsen: a process invoking an operation, or the operation's
 * completion. A completion is {@code ok} (it got an answer: for a compare-exchange that includes "the
 * condition failed", a normal result), {@code fail} (it certainly had no effect: a read that got no
 * answer, a refused request) or {@code info} (no answer to a write: it may or may not have taken effect).
 */
public enum OpType {
    INVOKE, OK, FAIL, INFO;

    @JsonValue
    public String json() {
        return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static OpType of(String text) {
        return valueOf(text.toUpperCase(Locale.ROOT));
    }
}
