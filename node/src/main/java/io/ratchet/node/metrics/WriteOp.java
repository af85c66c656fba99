package io.ratchet.node.metrics;

import io.ratchet.protocol.Command;
import java.util.Locale;

/** The kinds of write a metric counts apart, as its {@code op} tag. */
enum WriteOp {
    PUT, DELETE, ADD, TXN, DOCUMENT, PREPARE, SETTLE, SWEEP, OPEN_SESSION, OTHER;

    /** The tag's value: {@code put}, {@code open-session}, ... */
    String tag() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** A transaction that writes or deletes a document is a document write: that is how documents travel. */
    static WriteOp of(Command command) {
        return switch (command.kind()) {
            case PUT -> PUT;
            case DELETE -> DELETE;
            case ADD -> ADD;
            case TRANSACTION -> ((Command.Transaction) command).ops().stream()
                    .anyMatch(op -> op instanceof Command.DocumentOp) ? DOCUMENT : TXN;
            case PREPARE -> PREPARE;
            case SETTLE -> SETTLE;
            case SWEEP -> SWEEP;
            case OPEN_SESSION -> OPEN_SESSION;
            case SET_QUOTA, AUTH_CHANGE, FENCE -> OTHER;
        };
    }

    /** Whether this kind of write carries conditions that can be refused. */
    boolean conditional() {
        return this == PUT || this == DELETE || this == TXN || this == DOCUMENT || this == PREPARE;
    }
}
