package io.ratchet.node.security;

import io.ratchet.protocol.AuthTable;
import io.ratchet.protocol.AuthTable.Permission;
import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Refusal;
import io.ratchet.protocol.Request;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides whether the caller may do what a message asks, from the permission table this node has applied
 * ({@link AuthTable}). With authentication off, everything is allowed. With it on, a call must carry the
 * token of a user (else {@link Refusal.Reason#UNAUTHENTICATED}), and every key it names must be covered by
 * one of the user's grants (else {@link Refusal.Reason#FORBIDDEN}, naming the key and the permission):
 * a batch or transaction is refused whole, before anything is appended.
 *
 * <p>Writes are checked on the leader (a follower refuses them as not the leader first), against the
 * newest table; so a user removed by an entry is refused from the next message on. Tokens are compared by
 * their SHA-256; the token itself is never stored or logged.
 */
public final class Authorizer {
    private static final Logger LOG = LoggerFactory.getLogger(Authorizer.class);

    private final Supplier<AuthTable> table;
    private final RefusalLog refusals = new RefusalLog();

    public Authorizer(Supplier<AuthTable> table) {
        this.table = table;
    }

    /**
     * Null when the caller with {@code token} may send {@code batch}; else the refusal. {@code heldKeys} names
     * the keys a transaction across groups holds in the group the batch goes to: settling it writes them.
     */
    public Refusal check(String token, Batch batch, Function<String, List<String>> heldKeys) {
        return asUser(token, (t, user) -> {
            for (Request request : batch.requests()) {
                for (Command command : request.commands()) {
                    Refusal refused = check(t, user, command, heldKeys);
                    if (refused != null) {
                        return refused;
                    }
                }
            }
            return null;
        });
    }

    /** Null when the caller with {@code token} may ask {@code query}; else the refusal. */
    public Refusal check(String token, Query query) {
        return asUser(token, (t, user) -> check(t, user, query));
    }

    private Refusal check(AuthTable t, AuthTable.User user, Query query) {
        return switch (query.kind()) {
            case GET -> need(t, user, Permission.READ, ((Query.Get) query).key());
            case GETS -> needEach(t, user, Permission.READ, ((Query.Gets) query).gets().stream().map(Query.Get::key).toList());
            case GET_ALL -> needEach(t, user, Permission.READ, ((Query.GetAll) query).keys());
            case LIST_ITEMS -> need(t, user, Permission.READ, ((Query.ListItems) query).prefix());
            case WATCH -> need(t, user, Permission.READ, ((Query.Watch) query).key());
            case GET_DOCUMENT -> need(t, user, Permission.READ, ((Query.GetDocument) query).id());
            case STATS, SHAPE, TXN_STATUS -> null;
            // Hot keys name keys of every prefix; the permission table is the administrator's.
            case CONTENTION, AUTH_STATUS -> cluster(t, user);
        };
    }

    /**
     * Null when the caller with {@code token} may do what only an administrator may (membership, backup,
     * the quota, permissions); with {@code any}, any authenticated user (status).
     */
    public Refusal checkAdmin(String token, boolean any) {
        return asUser(token, (t, user) -> any ? null : cluster(t, user));
    }

    /**
     * Null when authentication is off; a refusal when {@code token} names no user; else what {@code rule}
     * says of that user, by the table read once for the whole message.
     */
    private Refusal asUser(String token, BiFunction<AuthTable, AuthTable.User, Refusal> rule) {
        AuthTable t = table.get();
        if (!t.enabled()) {
            return null;
        }
        AuthTable.User user = t.userByTokenHash(hash(token));
        return user == null ? unauthenticated(token) : rule.apply(t, user);
    }

    private Refusal check(AuthTable t, AuthTable.User user, Command command, Function<String, List<String>> heldKeys) {
        return switch (command.kind()) {
            case PUT, DELETE -> need(t, user, Permission.WRITE, ((Command.Op) command).key());
            case ADD -> need(t, user, Permission.WRITE, ((Command.Add) command).key());
            // Settling writes the transaction's held keys here: only a user who may write them all may.
            case SETTLE -> needEach(t, user, Permission.WRITE, heldKeys.apply(((Command.Settle) command).txn()));
            case TRANSACTION, PREPARE -> {
                for (Command.Op op : (command instanceof Command.Prepare p ? p.ops() : ((Command.Transaction) command).ops())) {
                    Refusal refused = switch (op.opKind()) {
                        case CHECK -> need(t, user, Permission.READ, op.key());
                        case PUT_DOCUMENT, DELETE_DOCUMENT -> need(t, user, Permission.WRITE, ((Command.DocumentOp) op).id());
                        case PUT, DELETE -> need(t, user, Permission.WRITE, op.key());
                    };
                    if (refused != null) {
                        yield refused;
                    }
                }
                yield null;
            }
            case OPEN_SESSION -> null; // what makes the user's own writes exactly-once; it touches no key
            case SWEEP, SET_QUOTA, AUTH_CHANGE, FENCE -> cluster(t, user); // the cluster's, not a key's
        };
    }

    /** Null when the user holds {@code permission} on every one of {@code keys}; else the first refusal. */
    private Refusal needEach(AuthTable t, AuthTable.User user, Permission permission, List<String> keys) {
        for (String key : keys) {
            Refusal refused = need(t, user, permission, key);
            if (refused != null) {
                return refused;
            }
        }
        return null;
    }

    private Refusal need(AuthTable t, AuthTable.User user, Permission permission, String key) {
        if (t.allows(user, permission, key)) {
            return null;
        }
        String message = "user '" + user.name() + "' has no " + permission.label() + " permission on '" + key + "'";
        refusals.log(message);
        return Refusal.forbidden(message);
    }

    private Refusal cluster(AuthTable t, AuthTable.User user) {
        if (t.isAdmin(user)) {
            return null;
        }
        String message = "user '" + user.name() + "' is not an administrator (admin on every key)";
        refusals.log(message);
        return Refusal.forbidden(message);
    }

    private Refusal unauthenticated(String token) {
        String message = token == null ? "authentication is on: give a token (--token, RATCHET_TOKEN, "
                + "or the header 'authorization: Bearer TOKEN')" : "the token names no user (wrong, or its user was removed)";
        refusals.log(message);
        return Refusal.unauthenticated(message);
    }

    /** The SHA-256 of a token, as the table keeps it; null for no token. */
    private static String hash(String token) {
        return token == null ? null : AuthTable.tokenHash(token);
    }

    /**
     * Refusals are logged once per kind each minute: a client retrying a refused call in a loop must not
     * fill the log, and an operator still sees that it happens.
     */
    private static final class RefusalLog {
        private static final long PERIOD_NANOS = 60_000_000_000L;
        private final java.util.Map<String, Long> last = new java.util.concurrent.ConcurrentHashMap<>();

        void log(String message) {
            long now = System.nanoTime();
            Long before = last.get(message);
            if (before != null && now - before < PERIOD_NANOS) {
                return;
            }
            if (last.size() > 1_000) {
                last.clear();
            }
            last.put(message, now);
            LOG.warn("refused: {}", message);
        }
    }
}
