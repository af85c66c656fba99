package io.ratchet.protocol;

/**
 * A kind of message, command, query, result or refusal, and the tag byte the codec writes for it. Each
 * family's kinds are an enum, and code that handles a family switches over its kinds in a switch
 * expression without a default, so adding a kind fails to compile until every such switch handles it.
 * A tag is fixed once released: the wire, the Raft log and snapshots hold it (docs/DESIGN.md, "Wire and
 * log format", lists them; {@code DesignTablesTest} checks the list against these enums).
 */
public interface WireKind {
    /** The byte the codec writes for this kind. */
    byte tag();

    /**
     * The kind of {@code kinds} with tag {@code tag}, or null when none has it (a later release's, or a
     * damaged message): the reader decides how to refuse it.
     */
    static <K extends WireKind> K byTag(K[] kinds, int tag) {
        for (K kind : kinds) {
            if (kind.tag() == tag) {
                return kind;
            }
        }
        return null;
    }
}
