package io.ratchet.chaos;

/**
 * A deliberately broken client a run may use, to show that the harness can fail: each breaks one rule, and
 * the named checker must report what that rule prevents. Off unless a hidden option asks for one; a run
 * with one names it in its summary ({@code test_mode}), so it is never taken for a real result.
 */
public enum TestMode {
    NONE(null, null),
    /** Register puts made unconditional: the register checker must find lost updates. */
    UNCONDITIONAL_PUTS("unconditional-puts", "conditional puts made unconditional (UnconditionalPuts): the register"
            + " checker must find lost updates"),
    /** Append transactions without their checks of the keys they only read: G-single and G2-item. */
    UNCHECKED_READS("unchecked-reads", "append transactions drop the checks of the keys they only read"
            + " (UncheckedReads): the append checker must find read and write skew (G-single, G2-item)"),
    /** Append reads across groups taken once, group after group: fractured reads, G-single. */
    READS_ONCE("reads-once", "append reads across groups taken once, one group after another, not until two agree"
            + " (ReadsTakenOnce): the append checker must find fractured reads (G-single)");

    private final String json;
    private final String description;

    TestMode(String json, String description) {
        this.json = json;
        this.description = description;
    }

    /** Its name in the summary; null when off. */
    public String json() {
        return json;
    }

    /** What it breaks and what must catch it, for the report; null when off. */
    public String description() {
        return description;
    }
}
