package io.ratchet.chaos.checker;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a checker concluded about one workload's history.
 *
 * @param workload  the workload checked
 * @param validity  valid, invalid (see anomalies) or unknown (see notes)
 * @param anomalies every violation found; empty unless invalid
 * @param notes     what was checked and how much, for the report
 * @param details   figures for the summary line (counts, the model a history met), by name; often empty
 */
public record CheckResult(String workload, Validity validity, List<Anomaly> anomalies, List<String> notes,
                          Map<String, Object> details) {
    public CheckResult {
        anomalies = List.copyOf(anomalies);
        notes = List.copyOf(notes);
        details = Collections.unmodifiableMap(new LinkedHashMap<>(details));
        if (!anomalies.isEmpty() && validity != Validity.INVALID) {
            throw new IllegalArgumentException("a result with anomalies is invalid");
        }
    }

    public CheckResult(String workload, Validity validity, List<Anomaly> anomalies, List<String> notes) {
        this(workload, validity, anomalies, notes, Map.of());
    }

    /** Invalid when there are anomalies, else {@code otherwise}. */
    public static CheckResult of(String workload, List<Anomaly> anomalies, Validity otherwise, List<String> notes) {
        return of(workload, anomalies, otherwise, notes, Map.of());
    }

    /** Invalid when there are anomalies, else {@code otherwise}; with figures for the summary. */
    public static CheckResult of(String workload, List<Anomaly> anomalies, Validity otherwise, List<String> notes,
                                 Map<String, Object> details) {
        return new CheckResult(workload, anomalies.isEmpty() ? otherwise : Validity.INVALID, anomalies, notes, details);
    }
}
