package io.ratchet.chaos.checker;

import java.util.List;

/**
 * What a checker concluded about one workload's history.
 *
 * @param workload  the workload checked
 * @param validity  valid, invalid (see anomalies) or unknown (see notes)
 * @param anomalies every violation found; empty unless invalid
 * @param notes     what was checked and how much, for the report
 */
public record CheckResult(String workload, Validity validity, List<Anomaly> anomalies, List<String> notes) {
    public CheckResult {
        anomalies = List.copyOf(anomalies);
        notes = List.copyOf(notes);
        if (!anomalies.isEmpty() && validity != Validity.INVALID) {
            throw new IllegalArgumentException("a result with anomalies is invalid");
        }
    }

    /** Invalid when there are anomalies, else {@code otherwise}. */
    public static CheckResult of(String workload, List<Anomaly> anomalies, Validity otherwise, List<String> notes) {
        return new CheckResult(workload, anomalies.isEmpty() ? otherwise : Validity.INVALID, anomalies, notes);
    }
}
