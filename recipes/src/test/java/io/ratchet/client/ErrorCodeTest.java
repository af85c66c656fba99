package io.ratchet.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.session.ConcurrencyException;
import io.ratchet.recipes.session.RetryExhaustedException;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Result;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class ErrorCodeTest {
    /** One of each of the client's exceptions, with the code it must report. */
    static final Map<RatchetException, ErrorCode> EXCEPTIONS = Map.ofEntries(
            Map.entry(new InvalidRequestException("key too long", null), ErrorCode.INVALID_REQUEST),
            Map.entry(new ConcurrencyException(List.of(new Result.Conflict("stock/widgets", 6, 7))), ErrorCode.CONDITION_FAILED),
            Map.entry(new RetryExhaustedException("gave up after 5 attempts", 5, null), ErrorCode.RETRY_EXHAUSTED),
            Map.entry(new LeaseLostException("printer-3", 42, null), ErrorCode.LEASE_LOST),
            Map.entry(new ClusterUnavailableException("no leader answered", null), ErrorCode.CLUSTER_UNAVAILABLE),
            Map.entry(new UnknownOutcomeException("the write got no answer", null), ErrorCode.UNKNOWN_OUTCOME),
            Map.entry(new QuotaExceededException(900, 1000, 200), ErrorCode.QUOTA_EXCEEDED),
            Map.entry(new DiskFullException("n1", 10, 32), ErrorCode.DISK_FULL),
            Map.entry(new AdminRefusedException("n4 is already a member"), ErrorCode.ADMIN_REFUSED),
            Map.entry(new AuthenticationException("no user has this token"), ErrorCode.UNAUTHENTICATED),
            Map.entry(new PermissionDeniedException("no write permission on orders/1"), ErrorCode.PERMISSION_DENIED),
            Map.entry(new NotAnIntegerException("profile", new Item("profile", "\"ada\"", 3, 3, 0, null)), ErrorCode.NOT_AN_INTEGER),
            Map.entry(new AddOverflowException("big", new Item("big", "9223372036854775807", 4, 4, 0, null), 1), ErrorCode.OVERFLOW),
            Map.entry(new UnsupportedCommandException("add", "member n3 runs a release without add"), ErrorCode.UNSUPPORTED));

    @Test
    void everyExceptionOfTheClientHasItsCode() {
        EXCEPTIONS.forEach((e, code) -> assertEquals(code, e.code(), e.getClass().getSimpleName()));
        EXCEPTIONS.forEach((e, code) -> assertEquals(code, ErrorCode.of(e), "of() asks the exception itself"));
    }

    @Test
    void everyCodeHasAnExitCodeAnHttpStatusAndANameOfItsOwn() {
        Set<String> names = new HashSet<>();
        for (ErrorCode code : ErrorCode.values()) {
            assertTrue(code.exitCode() > 0 && code.exitCode() < 64, code + " exits with " + code.exitCode());
            assertTrue(code.httpStatus() >= 400 && code.httpStatus() < 600, code + " answers " + code.httpStatus());
            assertTrue(code.wireName().matches("[a-z]+(_[a-z]+)*"), code.wireName() + " is lower_snake");
            assertTrue(names.add(code.wireName()), code.wireName() + " names one code");
        }
    }

    @Test
    void theExitCodesScriptsBranchOnAreTheOnesTheyAlwaysWere() {
        Map<ErrorCode, Integer> documented = Map.ofEntries(Map.entry(ErrorCode.CONDITION_FAILED, 1),
                Map.entry(ErrorCode.INVALID_REQUEST, 2), Map.entry(ErrorCode.CLUSTER_UNAVAILABLE, 3),
                Map.entry(ErrorCode.UNKNOWN_OUTCOME, 4), Map.entry(ErrorCode.INTERNAL_ERROR, 5),
                Map.entry(ErrorCode.QUOTA_EXCEEDED, 6), Map.entry(ErrorCode.DISK_FULL, 6),
                Map.entry(ErrorCode.ADMIN_REFUSED, 7), Map.entry(ErrorCode.UNAUTHENTICATED, 8),
                Map.entry(ErrorCode.PERMISSION_DENIED, 9), Map.entry(ErrorCode.NOT_AN_INTEGER, 1), Map.entry(ErrorCode.OVERFLOW, 1),
                Map.entry(ErrorCode.UNSUPPORTED, 10));
        documented.forEach((code, exit) -> assertEquals(exit, code.exitCode(), code.toString()));
    }

    @Test
    void aWriteThatMayHaveAppliedIsNeverCalledSafeToResendAsIs() {
        for (ErrorCode code : ErrorCode.values()) {
            if (code.retrySafe()) {
                assertTrue(code.didNotApply(), code + " is safe to resend only because nothing applied");
            }
        }
        assertFalse(ErrorCode.UNKNOWN_OUTCOME.didNotApply());
        assertFalse(ErrorCode.UNKNOWN_OUTCOME.retrySafe(), "only with an idempotency key");
        assertFalse(ErrorCode.LEASE_LOST.didNotApply(), "a renewal answered too late applied, and was given back");
        assertFalse(ErrorCode.INTERNAL_ERROR.didNotApply());
        assertTrue(ErrorCode.CLUSTER_UNAVAILABLE.didNotApply() && ErrorCode.CLUSTER_UNAVAILABLE.retrySafe());
        assertTrue(ErrorCode.CONDITION_FAILED.didNotApply());
        assertFalse(ErrorCode.CONDITION_FAILED.retrySafe(), "recompute from the current state instead");
        assertEquals(EnumSet.of(ErrorCode.RETRY_EXHAUSTED, ErrorCode.CLUSTER_UNAVAILABLE, ErrorCode.QUOTA_EXCEEDED,
                ErrorCode.DISK_FULL, ErrorCode.UNSUPPORTED), EnumSet.copyOf(List.of(ErrorCode.values()).stream().filter(ErrorCode::retrySafe).toList()));
    }

    @Test
    void aFailureThroughFuturesHasTheCodeOfWhatFailed() {
        RatchetException quota = new QuotaExceededException(1, 1, 1);
        assertEquals(ErrorCode.QUOTA_EXCEEDED, ErrorCode.of(new CompletionException(new ExecutionException(quota))));
        assertEquals(ErrorCode.INVALID_REQUEST, ErrorCode.of(new InvalidCommandException("a key must not be empty")));
        assertEquals(ErrorCode.INVALID_REQUEST, ErrorCode.of(new CompletionException(new IllegalArgumentException("--ttl"))));
        assertEquals(ErrorCode.INTERNAL_ERROR, ErrorCode.of(new IllegalStateException("a bug")));
        assertEquals(ErrorCode.INTERNAL_ERROR, ErrorCode.of(new CompletionException("cancelled", null)), "a wrapper of nothing");
    }
}
