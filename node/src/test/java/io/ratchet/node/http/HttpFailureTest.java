package io.ratchet.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.AdminRefusedException;
import io.ratchet.client.AuthenticationException;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.DiskFullException;
import io.ratchet.client.ErrorCode;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.PermissionDeniedException;
import io.ratchet.client.QuotaExceededException;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.session.ConcurrencyException;
import io.ratchet.recipes.session.RetryExhaustedException;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Result;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The answer to each failure a route can meet: the status and {@code error} docs/HTTP.md gives it, and its code. */
class HttpFailureTest {
    private record Expected(int status, String error, ErrorCode code) {
    }

    @Test
    void everyFailureKeepsItsDocumentedStatusAndErrorAndCarriesItsCode() {
        Map<Throwable, Expected> failures = Map.ofEntries(
                Map.entry(new InvalidRequestException("key too long", null), new Expected(400, "bad_request", ErrorCode.INVALID_REQUEST)),
                Map.entry(new LeaseLostException("printer-3", 42, null), new Expected(412, "precondition_failed", ErrorCode.LEASE_LOST)),
                Map.entry(new QuotaExceededException(900, 1000, 200), new Expected(507, "quota_exceeded", ErrorCode.QUOTA_EXCEEDED)),
                Map.entry(new DiskFullException("n1", 10, 32), new Expected(507, "disk_full", ErrorCode.DISK_FULL)),
                Map.entry(new AuthenticationException("no user has this token"), new Expected(401, "unauthenticated", ErrorCode.UNAUTHENTICATED)),
                Map.entry(new PermissionDeniedException("no write on orders/1"), new Expected(403, "forbidden", ErrorCode.PERMISSION_DENIED)),
                Map.entry(new ClusterUnavailableException("no leader answered", null), new Expected(503, "unavailable", ErrorCode.CLUSTER_UNAVAILABLE)),
                Map.entry(new UnknownOutcomeException("the write got no answer", null), new Expected(504, "unknown_outcome", ErrorCode.UNKNOWN_OUTCOME)),
                Map.entry(new IllegalStateException("a bug"), new Expected(500, "internal", ErrorCode.INTERNAL_ERROR)),
                // Not met by a route today; answered by the table rather than as a bug if one ever is.
                Map.entry(new ConcurrencyException(List.of(new Result.Conflict("a", 3, 4))), new Expected(412, "precondition_failed", ErrorCode.CONDITION_FAILED)),
                Map.entry(new RetryExhaustedException("gave up", 5, null), new Expected(409, "conflict", ErrorCode.RETRY_EXHAUSTED)),
                Map.entry(new AdminRefusedException("n4 is already a member"), new Expected(409, "conflict", ErrorCode.ADMIN_REFUSED)));
        failures.forEach((failure, expected) -> {
            HttpFailures.Answer a = HttpFailures.answer(new CompletionException(failure));
            String what = failure.getClass().getSimpleName() + ": " + a;
            assertEquals(expected.status(), a.status(), what);
            assertEquals(expected.error(), a.body().get("error").asText(), what);
            assertEquals(expected.code().wireName(), a.body().get("code").asText(), what);
            assertEquals(expected.code().httpStatus(), a.status(), "the table's status: " + what);
            assertTrue(a.body().get("message").asText().contains(failure.getMessage()), what);
        });
    }

    @Test
    void whatAFailureCarriesStillComesWithIt() {
        HttpFailures.Answer quota = HttpFailures.answer(new QuotaExceededException(900, 1000, 200));
        assertEquals(900, quota.body().get("used").asLong());
        assertEquals(1000, quota.body().get("quota").asLong());
        assertEquals(200, quota.body().get("needed").asLong());
        HttpFailures.Answer disk = HttpFailures.answer(new DiskFullException("n1", 10, 32));
        assertEquals("n1", disk.body().get("node").asText());
        assertEquals(32, disk.body().get("floorBytes").asLong());
        assertTrue(HttpFailures.answer(new LeaseLostException("printer-3", 42, null)).body().get("holder").isNull());
        assertEquals("1", HttpFailures.answer(new ClusterUnavailableException("no leader", null)).headers().get("Retry-After"));
        assertEquals("Bearer", HttpFailures.answer(new AuthenticationException("no token")).headers().get("WWW-Authenticate"));
    }

    @Test
    void theApisOwnRefusalsAreInvalidRequestsUnderTheirOwnStatus() {
        HttpFailures.Answer tooLarge = HttpFailures.answer(HttpError.tooLarge("the body is 2 MiB"));
        assertEquals(413, tooLarge.status());
        assertEquals("payload_too_large", tooLarge.body().get("error").asText());
        assertEquals("invalid_request", tooLarge.body().get("code").asText());
        HttpFailures.Answer badRequest = HttpFailures.answer(new IllegalArgumentException("ttl must be positive"));
        assertEquals(400, badRequest.status());
        assertEquals("bad_request", badRequest.body().get("error").asText());
        assertEquals("invalid_request", badRequest.body().get("code").asText());
    }

    @Test
    void jettysOwnErrorsCarryACodeToo() {
        assertEquals("not_found", jetty(404).get("code").asText());
        assertEquals("headers_too_large", jetty(431).get("error").asText());
        assertEquals("invalid_request", jetty(431).get("code").asText());
        assertEquals("invalid_request", jetty(505).get("code").asText());
        assertEquals("internal_error", jetty(500).get("code").asText());
    }

    private static JsonNode jetty(int status) {
        return Json.parse(new String(JsonErrors.body(status, null), StandardCharsets.UTF_8));
    }
}
