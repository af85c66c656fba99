package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.AddOverflowException;
import io.ratchet.client.AdminRefusedException;
import io.ratchet.client.AuthenticationException;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.DiskFullException;
import io.ratchet.client.ErrorCode;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.NotAnIntegerException;
import io.ratchet.client.UnsupportedCommandException;
import io.ratchet.client.PermissionDeniedException;
import io.ratchet.client.QuotaExceededException;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.recipes.lock.LeaseLostException;
import io.ratchet.recipes.session.ConcurrencyException;
import io.ratchet.recipes.session.RetryExhaustedException;
import io.ratchet.node.http.HttpFailures;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Result;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * One failure, one code: a script that runs {@code ratchet --json} and a program that calls the HTTP API
 * switch on the same {@code code} for it, and the command line keeps its exit codes and {@code error} names.
 */
class ErrorCodesTest {
    /** A failure of each kind a command can end with, and the exit code and {@code error} scripts already read. */
    private record Printed(int exitCode, String error) {
    }

    private static final Map<Exception, Printed> FAILURES = Map.ofEntries(
            Map.entry(new InvalidRequestException("key too long", null), new Printed(2, "invalid_request")),
            Map.entry(new InvalidCommandException("a key must not be empty"), new Printed(2, "invalid_request")),
            Map.entry(new IllegalArgumentException("--ttl must be positive"), new Printed(2, "invalid_request")),
            Map.entry(new ClusterUnavailableException("no leader answered", null), new Printed(3, "cluster_unavailable")),
            Map.entry(new UnknownOutcomeException("the write got no answer", null), new Printed(4, "unknown_outcome")),
            Map.entry(new IllegalStateException("a bug"), new Printed(5, "internal_error")),
            Map.entry(new QuotaExceededException(900, 1000, 200), new Printed(6, "quota_exceeded")),
            Map.entry(new DiskFullException("n1", 10, 32), new Printed(6, "disk_full")),
            Map.entry(new AdminRefusedException("n4 is already a member"), new Printed(7, "refused")),
            Map.entry(new AuthenticationException("no user has this token"), new Printed(8, "unauthenticated")),
            Map.entry(new PermissionDeniedException("no write on orders/1"), new Printed(9, "forbidden")),
            // Before codes these were a command's own to catch (exit 1) or fell through to internal_error.
            Map.entry(new LeaseLostException("printer-3", 42, null), new Printed(1, "lease_lost")),
            Map.entry(new ConcurrencyException(List.of(new Result.Conflict("a", 3, 4))), new Printed(1, "condition_failed")),
            Map.entry(new RetryExhaustedException("gave up", 5, null), new Printed(1, "retry_exhausted")),
            Map.entry(new NotAnIntegerException("profile", new Item("profile", "\"ada\"", 3, 3, 0, null)), new Printed(1, "not_an_integer")),
            Map.entry(new AddOverflowException("big", new Item("big", "9223372036854775807", 4, 4, 0, null), 1),
                    new Printed(1, "overflow")),
            Map.entry(new UnsupportedCommandException("add", "member n3 runs a release without add"), new Printed(10, "unsupported")));

    private record CliAnswer(int exitCode, JsonNode json, String err) {
    }

    private static CliAnswer cli(Exception failure) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new Main());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        cli.parseArgs("--json");
        int exit = Main.handle(failure, cli, null);
        return new CliAnswer(exit, Json.parse(out.toString()), err.toString());
    }

    @Test
    void theCommandLineAndTheHttpApiReportTheSameCodeForTheSameFailure() {
        Set<ErrorCode> seen = EnumSet.noneOf(ErrorCode.class);
        FAILURES.forEach((failure, printed) -> {
            CliAnswer cli = cli(failure);
            HttpFailures.Answer http = HttpFailures.answer(failure);
            String what = failure.getClass().getSimpleName() + ": " + cli.json() + " / " + http.status() + " " + http.body();
            ErrorCode code = ErrorCode.of(failure);
            seen.add(code);
            assertEquals(code.wireName(), cli.json().get("code").asText(), what);
            assertEquals(cli.json().get("code").asText(), http.body().get("code").asText(), what);
            assertEquals(code.exitCode(), cli.exitCode(), what);
            assertEquals(code.exitCode(), cli.json().get("exitCode").asInt(), what);
            assertEquals(code.httpStatus(), http.status(), what);
            assertEquals(printed.exitCode(), cli.exitCode(), "the exit code scripts branch on: " + what);
            assertEquals(printed.error(), cli.json().get("error").asText(), "the error field scripts read: " + what);
            assertTrue(cli.err().contains(failure.getMessage()), what);
        });
        assertEquals(EnumSet.complementOf(EnumSet.of(ErrorCode.NOT_FOUND)), seen,
                "every code a failure can carry is covered (not found is an answer of its own, never thrown)");
    }

    @Test
    void theNamedExitCodesAreTheTables() {
        assertEquals(ErrorCode.CONDITION_FAILED.exitCode(), ExitCode.CONDITION_FAILED);
        assertEquals(1, ExitCode.CONDITION_FAILED);
        assertEquals(2, ExitCode.INVALID);
        assertEquals(3, ExitCode.UNAVAILABLE);
        assertEquals(4, ExitCode.UNKNOWN_OUTCOME);
        assertEquals(5, ExitCode.INTERNAL_ERROR);
        assertEquals(6, ExitCode.QUOTA_EXCEEDED);
        assertEquals(7, ExitCode.REFUSED);
        assertEquals(8, ExitCode.UNAUTHENTICATED);
        assertEquals(9, ExitCode.FORBIDDEN);
    }
}
