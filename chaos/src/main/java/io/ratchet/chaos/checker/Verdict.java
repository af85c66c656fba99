package io.ratchet.chaos.checker;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The checks of one history taken together: the worst validity of any of them, each workload's own,
 * and every anomaly in the order the checks found them.
 */
public record Verdict(Validity validity, Map<String, Validity> checks, List<Anomaly> anomalies) {
    public static Verdict of(List<CheckResult> results) {
        Validity validity = Validity.VALID;
        Map<String, Validity> checks = new LinkedHashMap<>();
        List<Anomaly> anomalies = new ArrayList<>();
        for (CheckResult r : results) {
            validity = validity.and(r.validity());
            checks.put(r.workload(), r.validity());
            anomalies.addAll(r.anomalies());
        }
        return new Verdict(validity, Collections.unmodifiableMap(checks), List.copyOf(anomalies));
    }
}
