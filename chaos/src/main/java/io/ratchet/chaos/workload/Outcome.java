package io.ratchet.chaos.workload;

import java.util.function.Function;

/**
 * How one recorded operation ended, for the worker that ran it: an answer, a certain failure, or no
 * answer (the operation may or may not have taken effect).
 */
public final class Outcome<T> {
    private enum Kind { OK, FAILED, UNKNOWN }

    private final Kind kind;
    private final T value;

    private Outcome(Kind kind, T value) {
        this.kind = kind;
        this.value = value;
    }

    static <T> Outcome<T> answered(T value) {
        return new Outcome<>(Kind.OK, value);
    }

    static <T> Outcome<T> failure() {
        return new Outcome<>(Kind.FAILED, null);
    }

    static <T> Outcome<T> noAnswer() {
        return new Outcome<>(Kind.UNKNOWN, null);
    }

    /** It got an answer: {@link #value()}. */
    public boolean ok() {
        return kind == Kind.OK;
    }

    /** It had no answer and may have taken effect. */
    public boolean unknown() {
        return kind == Kind.UNKNOWN;
    }

    /** The same ending, with the answer (if any) passed through {@code f}. */
    public <U> Outcome<U> map(Function<? super T, ? extends U> f) {
        return new Outcome<>(kind, kind == Kind.OK ? f.apply(value) : null);
    }

    /** The answer; only when {@link #ok()}. */
    public T value() {
        if (kind != Kind.OK) {
            throw new IllegalStateException("no answer: the operation " + (kind == Kind.UNKNOWN ? "has an unknown outcome" : "failed"));
        }
        return value;
    }
}
