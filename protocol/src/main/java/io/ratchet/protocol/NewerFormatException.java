package io.ratchet.protocol;

/**
 * A message or log entry in a format newer than this build reads: written by a later release. From a
 * client it is refused like any command this node cannot read. In the log it is something else: the entry
 * was committed, and replicas that read it applied it, so a replica that cannot must stop rather than skip
 * it and drift from the others (see {@code docs/DESIGN.md}, "Versions and upgrades").
 */
public final class NewerFormatException extends InvalidCommandException {
    private final int format;

    public NewerFormatException(int format) {
        super("format version " + format + " is newer than this release reads (" + Codec.FORMAT_VERSION
                + "): a later release wrote it");
        this.format = format;
    }

    /** The format the message says it is in. */
    public int format() {
        return format;
    }
}
