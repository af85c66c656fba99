package io.ratchet.protocol;

import java.util.List;

/**
 * One client request: commands applied in order in one log entry. With an idempotency key, the node
 * remembers the results for {@code retentionMillis} of cluster time, and a request that carries the
 * same key again (from any connection) gets those results back instead of being applied twice.
 *
 * @param idempotencyKey  null for none
 * @param retentionMillis how long the results are remembered; 0 without a key
 */
public record Request(String idempotencyKey, long retentionMillis, List<Command> commands) {
    /** The longest an idempotency key is remembered. */
    public static final long MAX_RETENTION_MILLIS = 24L * 3600 * 1000;
    public static final int MAX_IDEMPOTENCY_KEY_LENGTH = 128;

    public Request {
        commands = List.copyOf(commands);
    }

    public static Request of(List<Command> commands) {
        return new Request(null, 0, commands);
    }

    public void validate() {
        if (commands.isEmpty() || commands.size() > Limits.MAX_COMMANDS_PER_REQUEST) {
            throw new InvalidCommandException("a request carries 1.." + Limits.MAX_COMMANDS_PER_REQUEST
                    + " commands, not " + commands.size());
        }
        if (idempotencyKey != null) {
            if (idempotencyKey.isEmpty() || idempotencyKey.length() > MAX_IDEMPOTENCY_KEY_LENGTH) {
                throw new InvalidCommandException("an idempotency key is 1.." + MAX_IDEMPOTENCY_KEY_LENGTH + " characters");
            }
            if (retentionMillis <= 0 || retentionMillis > MAX_RETENTION_MILLIS) {
                throw new InvalidCommandException("idempotency retention must be 1 ms .. 24 h, not " + retentionMillis + " ms");
            }
        } else if (retentionMillis != 0) {
            throw new InvalidCommandException("a retention needs an idempotency key");
        }
        commands.forEach(Command::validate);
    }
}
