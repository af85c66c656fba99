package io.ratchet.chaos;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ratchet.chaos.checker.Anomaly;
import io.ratchet.chaos.checker.Validity;
import java.util.List;
import java.util.Map;

/**
 * The one JSON line a run prints last.
 *
 * @param valid     true only when every check that ran passed
 * @param ops       client operations invoked (worker operations and final reads)
 * @param ok        of which got an answer (a compare-exchange whose condition failed is an answer)
 * @param failed    of which certainly had no effect
 * @param unknown   of which got no answer: writes that may or may not have been applied
 * @param faults    faults the nemesis injected
 * @param changes   what a membership nemesis changed ({@code MembershipNemesis#changes()}); null without one
 * @param result    valid, invalid, unknown (a check could not decide), skipped, or error (the harness failed)
 * @param checks    each workload's verdict
 * @param details   figures a check gives beside its verdict, by workload (the append check's transaction counts
 *                  and the strongest model its history met); absent when none does
 * @param skipped   workloads or nemeses that could not run here, with the reason
 * @param testMode  set when a deliberately broken test mode was on
 * @param gaps      how long each fault kept each workload's writes and reads waiting ({@link Availability#json}); null
 *                  without faults
 * @param load      what the unchecked load beside the workloads did ({@code --load}); null without one
 * @param security  {@code tls} or {@code tls+auth}; null for a plaintext cluster
 * @param authRefusals client operations refused for a token or a permission (each an anomaly); null without auth
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"valid", "workload", "nemesis", "ops", "ok", "failed", "unknown", "faults", "changes", "unknown_per_fault",
        "gaps", "load", "security", "auth_refusals", "anomalies", "result",
        "checks", "details", "skipped", "seed", "nodes", "duration_s", "test_mode", "error", "run_dir"})
public record Summary(boolean valid, String workload, String nemesis, long ops, long ok, long failed, long unknown,
                      int faults, Map<String, Integer> changes, List<Anomaly> anomalies, String result, Map<String, Validity> checks,
                      Map<String, Map<String, Object>> details, List<String> skipped, long seed, int nodes, @JsonProperty("duration_s") double durationSeconds,
                      @JsonProperty("test_mode") String testMode, String error, @JsonProperty("run_dir") String runDir,
                      Map<String, Object> gaps, BackgroundLoad.Counts load, String security, @JsonProperty("auth_refusals") Integer authRefusals) {

    static final ObjectMapper JSON = new ObjectMapper();

    /** 0 valid, 1 anomalies found, 3 undecided or skipped, 4 the harness failed (2 is a usage error). */
    public int exitCode() {
        return switch (result) {
            case "valid" -> 0;
            case "invalid" -> 1;
            case "error" -> 4;
            default -> 3;
        };
    }

    /**
     * Operations that ended with an unknown outcome, per injected fault: with client sessions a write is
     * resent until a node answers, so this counts only the writes whose whole retry budget a fault ate.
     */
    @JsonProperty("unknown_per_fault")
    public Double unknownPerFault() {
        return faults == 0 ? null : (double) unknown / faults;
    }

    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the summary", e);
        }
    }
}
