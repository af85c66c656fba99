package io.ratchet.common;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class FailuresTest {
    @Test
    void unwrapStripsEveryLayerFuturesAddAndNothingElse() {
        ConnectException refused = new ConnectException("refused");
        UncheckedIOException io = new UncheckedIOException(refused);
        assertSame(io, Failures.unwrap(new CompletionException(new ExecutionException(new CompletionException(io)))));
        assertSame(io, Failures.unwrap(io), "a failure that is no wrapper is itself");
        CompletionException empty = new CompletionException("cancelled", null);
        assertSame(empty, Failures.unwrap(empty), "a wrapper of nothing is kept: it is all there is");
        assertNull(Failures.unwrap(null));
    }

    @Test
    void rootCauseIsTheInnermostAndFindTheFirstOfItsKind() {
        ConnectException refused = new ConnectException("refused");
        IOException io = new IOException("send failed", refused);
        CompletionException wrapped = new CompletionException(io);
        assertSame(refused, Failures.rootCause(wrapped));
        assertSame(refused, Failures.rootCause(refused), "no cause: itself");
        assertSame(io, Failures.find(wrapped, IOException.class), "the first, not the innermost");
        assertSame(refused, Failures.find(wrapped, ConnectException.class));
        assertNull(Failures.find(wrapped, IllegalStateException.class));
    }
}
