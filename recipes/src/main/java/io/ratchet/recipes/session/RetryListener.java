package io.ratchet.recipes.session;

/**
 * Receives the events of {@link Retry} loops ({@link Retry#withListener}), each operation's in the
 * order they happened. Events of different operations interleave; {@link RetryEvent#operationId()} tells
 * them apart.
 *
 * <p>Called on the thread that drives the attempt: for {@code run} and {@code call} the caller's own;
 * for an {@link Retry#update} combined with others, possibly another caller's thread of the same client.
 * Keep it quick: a combined put waits for it. An exception it throws is logged and otherwise ignored.
 */
@FunctionalInterface
public interface RetryListener {

    void onEvent(RetryEvent event);
}
