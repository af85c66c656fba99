package io.ratchet.protocol;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Who may do what: users, each named by the SHA-256 of a bearer token and holding roles, and roles, each
 * granting read, write or admin on key prefixes (as etcd's roles grant key ranges). Replicated state:
 * changed only by {@link Command.AuthChange} entries, kept in snapshots and so in backups; immutable, so
 * a reader holds one version whole.
 *
 * <p>Permissions nest: admin includes write, write includes read. A grant on a prefix covers every key
 * that starts with it, compared as keys are (case-insensitively); the empty prefix covers every key.
 * Admin on the empty prefix (the built-in role {@value #ROOT}) also covers what belongs to no key:
 * membership, backups, the quota and these permissions. An Atomic Guard key ({@code rvn-atomic/ID})
 * follows its document's id, so whoever may write {@code users/7} may move its guard.
 */
public final class AuthTable {
    /** The built-in role: admin on every key and on the cluster. */
    public static final String ROOT = "root";
    public static final AuthTable EMPTY = new AuthTable(false, Map.of(), Map.of());
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}");
    private static final Pattern HASH = Pattern.compile("[0-9a-f]{64}");
    private static final List<Grant> ROOT_GRANTS = List.of(new Grant(Permission.ADMIN, ""));

    /** What a grant allows, and the tag the codec writes for it. */
    public enum Permission implements WireKind {
        READ(0), WRITE(1), ADMIN(2);

        private final byte tag;

        Permission(int tag) {
            this.tag = (byte) tag;
        }

        @Override
        public byte tag() {
            return tag;
        }

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Permission parse(String text) {
            for (Permission p : values()) {
                if (p.label().equals(text.toLowerCase(Locale.ROOT))) {
                    return p;
                }
            }
            throw new InvalidCommandException("a permission is read, write or admin, not '" + text + "'");
        }
    }

    /** {@code permission} on every key starting with {@code prefix} (normalized). */
    public record Grant(Permission permission, String prefix) {
    }

    /** A user: the SHA-256 (hex) of its token, and its roles. */
    public record User(String name, String tokenHash, List<String> roles) {
        public User {
            roles = List.copyOf(roles);
        }
    }

    private final boolean enabled;
    private final Map<String, User> users;
    private final Map<String, List<Grant>> roles;
    private final Map<String, User> byTokenHash;

    public AuthTable(boolean enabled, Map<String, User> users, Map<String, List<Grant>> roles) {
        this.enabled = enabled;
        this.users = java.util.Collections.unmodifiableMap(new TreeMap<>(users));
        TreeMap<String, List<Grant>> r = new TreeMap<>();
        roles.forEach((name, grants) -> r.put(name, List.copyOf(grants)));
        this.roles = java.util.Collections.unmodifiableMap(r);
        Map<String, User> index = new HashMap<>();
        users.values().forEach(u -> index.put(u.tokenHash(), u));
        this.byTokenHash = index;
    }

    public boolean enabled() {
        return enabled;
    }

    public Map<String, User> users() {
        return users;
    }

    /** The roles defined by grants (the built-in {@value #ROOT} is not listed). */
    public Map<String, List<Grant>> roles() {
        return roles;
    }

    /** The user whose token hashes to {@code tokenHash}, or null. */
    public User userByTokenHash(String tokenHash) {
        return byTokenHash.get(tokenHash);
    }

    /** Whether {@code user} holds {@code needed} on {@code key} (a key, or a prefix a list or watch asks for). */
    public boolean allows(User user, Permission needed, String key) {
        String k = Keys.normalize(key);
        if (Keys.isGuard(k)) {
            k = k.substring(Document.guardKey("").length());
        }
        for (String role : user.roles()) {
            for (Grant g : grantsOf(role)) {
                if (g.permission().compareTo(needed) >= 0 && k.startsWith(g.prefix())) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether {@code user} is an administrator of the cluster (admin on the empty prefix). */
    public boolean isAdmin(User user) {
        return allows(user, Permission.ADMIN, "");
    }

    private List<Grant> grantsOf(String role) {
        return role.equals(ROOT) ? ROOT_GRANTS : roles.getOrDefault(role, List.of());
    }

    /**
     * This table with {@code change} applied; a change that cannot apply (a user that exists, enabling
     * with no administrator, removing the last administrator while enabled) throws
     * {@link InvalidCommandException} naming why, and changes nothing. Deterministic: every replica
     * gets the same table or the same refusal.
     */
    public AuthTable apply(Command.AuthChange change) {
        Map<String, User> u = new TreeMap<>(users);
        Map<String, List<Grant>> r = new TreeMap<>(roles);
        boolean on = switch (change.changeKind()) {
            case ENABLE -> ((Command.AuthChange.Enable) change).enabled();
            case ADD_USER -> {
                Command.AuthChange.AddUser a = (Command.AuthChange.AddUser) change;
                if (u.containsKey(a.name())) {
                    throw new InvalidCommandException("user '" + a.name() + "' exists; remove it first to give it a new token");
                }
                if (byTokenHash.containsKey(a.tokenHash())) {
                    throw new InvalidCommandException("that token is another user's");
                }
                u.put(a.name(), new User(a.name(), a.tokenHash(), a.roles()));
                yield enabled;
            }
            case REMOVE_USER -> {
                Command.AuthChange.RemoveUser d = (Command.AuthChange.RemoveUser) change;
                if (u.remove(d.name()) == null) {
                    throw new InvalidCommandException("no user '" + d.name() + "'");
                }
                yield enabled;
            }
            case GRANT -> {
                Command.AuthChange.Grant g = (Command.AuthChange.Grant) change;
                List<Grant> grants = new ArrayList<>(r.getOrDefault(g.role(), List.of()));
                Grant grant = new Grant(g.permission(), Keys.normalize(g.prefix()));
                if (!grants.contains(grant)) {
                    grants.add(grant);
                }
                r.put(g.role(), grants);
                yield enabled;
            }
            case REVOKE -> {
                Command.AuthChange.Revoke g = (Command.AuthChange.Revoke) change;
                List<Grant> grants = new ArrayList<>(r.getOrDefault(g.role(), List.of()));
                if (!grants.remove(new Grant(g.permission(), Keys.normalize(g.prefix())))) {
                    throw new InvalidCommandException("role '" + g.role() + "' has no " + g.permission().label()
                            + " grant on '" + g.prefix() + "'");
                }
                if (grants.isEmpty()) {
                    r.remove(g.role());
                } else {
                    r.put(g.role(), grants);
                }
                yield enabled;
            }
        };
        AuthTable next = new AuthTable(on, u, r);
        if (on && next.users.values().stream().noneMatch(next::isAdmin)) {
            throw new InvalidCommandException(enabled
                    ? "authentication is on and this would leave no user with admin on every key; add one first"
                    : "enabling authentication needs a user with admin on every key first "
                            + "(e.g. ratchet user add root --role root)");
        }
        return next;
    }

    /** The same table without token hashes: what status answers show. */
    public AuthTable withoutSecrets() {
        Map<String, User> u = new TreeMap<>();
        users.forEach((name, user) -> u.put(name, new User(name, "", user.roles())));
        return new AuthTable(enabled, u, roles);
    }

    /** The SHA-256 (hex) of a token: how the table knows it, so the token itself is never stored. */
    public static String tokenHash(String token) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(token.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    static void checkName(String what, String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new InvalidCommandException("a " + what + " name is 1-64 letters, digits, '_', '.', '@' or '-', "
                    + "starting with a letter or digit; not '" + name + "'");
        }
    }

    static void checkHash(String hash) {
        if (hash == null || !HASH.matcher(hash).matches()) {
            throw new InvalidCommandException("a token hash is 64 lower-case hex digits (SHA-256)");
        }
    }

    static void checkRoles(Collection<String> roles) {
        if (roles.size() > 64) {
            throw new InvalidCommandException("a user has at most 64 roles");
        }
        roles.forEach(r -> checkName("role", r));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AuthTable t && t.enabled == enabled && t.users.equals(users) && t.roles.equals(roles);
    }

    @Override
    public int hashCode() {
        return Boolean.hashCode(enabled) * 31 + users.hashCode() * 17 + roles.hashCode();
    }

    @Override
    public String toString() {
        return "AuthTable[enabled=" + enabled + ", users=" + users.keySet() + ", roles=" + roles + "]";
    }
}
