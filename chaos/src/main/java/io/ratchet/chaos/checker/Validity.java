package io.ratchet.chaos.checker;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * A checker's verdict, from best to worst. UNKNOWN means it could not decide (a search budget ran out,
 * a final read is missing); it is never reported as valid.
 */
public enum Validity {
    VALID, UNKNOWN, INVALID;

    /** The worse of two verdicts: any anomaly makes the whole invalid, else any undecided part unknown. */
    public Validity and(Validity other) {
        return compareTo(other) >= 0 ? this : other;
    }

    @JsonValue
    public String json() {
        return name().toLowerCase(Locale.ROOT);
    }
}
