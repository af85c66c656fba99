package io.ratchet.client;

/**
 * The leader refused a write before the log because it carries a command that some member of the cluster
 * may not be able to apply: a node of an earlier release, during a rolling upgrade (docs/DESIGN.md,
 * "Versions and upgrades"). Nothing was written. Retrying is safe, and succeeds once every member runs a
 * release that has the command and the leader has heard so from each.
 */
public final class UnsupportedCommandException extends RatchetException {
    private final String command;

    public UnsupportedCommandException(String command, String reason) {
        super(ErrorCode.UNSUPPORTED, "the cluster cannot take '" + command + "' yet: " + reason + "; nothing was written", null);
        this.command = command;
    }

    /** The command's name ({@code add}). */
    public String command() {
        return command;
    }
}
