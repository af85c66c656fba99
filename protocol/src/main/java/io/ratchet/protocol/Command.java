package io.ratchet.protocol;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A write that goes through the Raft log. Writes are conditioned on an item's index: the Raft log index
 * of the entry that last wrote it; index 0 names an absent item.
 */
public sealed interface Command permits Command.Put, Command.Delete, Command.Transaction, Command.Sweep,
        Command.OpenSession, Command.SetQuota, Command.AuthChange, Command.Prepare, Command.Settle, Command.Fence,
        Command.Add {

    /** Which command this is: what code that handles commands switches on (see {@link WireKind}). */
    Kind kind();

    /** Checks the command's own fields; throws {@link InvalidCommandException} when one is bad. */
    void validate();

    /**
     * The kinds of command and their tags. Commands and transaction operations share one tag space
     * ({@link Op.Kind}): a put or a delete has one tag, alone or in a transaction.
     */
    enum Kind implements WireKind {
        PUT(1), DELETE(2), TRANSACTION(3), SWEEP(4), OPEN_SESSION(8), SET_QUOTA(9), AUTH_CHANGE(10), PREPARE(11), SETTLE(12), FENCE(13),
        ADD(14);

        private final byte tag;

        Kind(int tag) {
            this.tag = (byte) tag;
        }

        @Override
        public byte tag() {
            return tag;
        }
    }

    /** One operation of a {@link Transaction}: a condition on {@code key()} at {@code index()}, maybe a write. */
    sealed interface Op permits Put, Delete, Check, DocumentOp {
        /** Which operation this is (named apart from {@link Command#kind}, as a put or delete is both). */
        Kind opKind();

        /** The kinds of operation and their tags, in the tag space commands use too. */
        enum Kind implements WireKind {
            PUT(1), DELETE(2), CHECK(5), PUT_DOCUMENT(6), DELETE_DOCUMENT(7);

            private final byte tag;

            Kind(int tag) {
                this.tag = (byte) tag;
            }

            @Override
            public byte tag() {
                return tag;
            }
        }

        /** The item the condition names (for a document op, its guard). */
        String key();

        /** The index the item must have (0: absent). */
        long index();

        void validate();
    }

    /**
     * Store {@code value} under {@code key} when {@code index} is 0 and the key is absent (create-only),
     * or {@code index} equals the item's current index.
     *
     * @param value            compact JSON text, any value but null
     * @param metadata         compact JSON object text, or null for none
     * @param ttlMillis        when above 0, the item expires this long after the entry's cluster time
     *                         ({@code @expires} is set from it); a put at an index with a ttl renews,
     *                         and fails once the item has expired
     * @param expiredIsAbsent  with index 0: an item that has expired at cluster time counts as absent
     *                         and is replaced (how a lock is taken over from a holder whose lease ran out)
     */
    record Put(String key, String value, long index, String metadata, long ttlMillis, boolean expiredIsAbsent)
            implements Command, Op {

        public Put(String key, String value, long index, String metadata) {
            this(key, value, index, metadata, 0, false);
        }

        @Override
        public void validate() {
            Keys.validateWritable(key);
            checkIndex(index);
            Json.validateValue(value);
            Json.validateMetadata(metadata);
            if (ttlMillis < 0 || ttlMillis > Expiry.MAX_TTL_MILLIS) {
                throw new InvalidCommandException("ttl must be 0 (none) .. 366 days, not " + ttlMillis + " ms");
            }
            long expires = Expiry.fromMetadata(metadata);
            if (ttlMillis > 0 && expires != 0) {
                throw new InvalidCommandException("give a ttl or an " + Expiry.FIELD + " instant, not both");
            }
            if (expiredIsAbsent && index != 0) {
                throw new InvalidCommandException("'expired counts as absent' goes with index 0 (create), not " + index);
            }
        }

        @Override
        public Command.Kind kind() {
            return Command.Kind.PUT;
        }

        @Override
        public Op.Kind opKind() {
            return Op.Kind.PUT;
        }
    }

    /** Remove {@code key} when {@code index} (never 0) equals the item's current index. */
    record Delete(String key, long index) implements Command, Op {
        @Override
        public void validate() {
            Keys.validateWritable(key);
            checkIndex(index);
            if (index == 0) {
                throw new InvalidCommandException("delete of '" + key + "' needs the item's index; 0 names no item");
            }
        }

        @Override
        public Command.Kind kind() {
            return Command.Kind.DELETE;
        }

        @Override
        public Op.Kind opKind() {
            return Op.Kind.DELETE;
        }
    }

    /**
     * Adds {@code delta} to the JSON integer under {@code key}: a write with no condition, so adds to one key
     * never conflict and need no retry loop (docs/DESIGN.md, "Commutative add"). An absent key, or an item
     * that has expired at the entry's cluster time, counts as 0 and is created holding {@code delta}, with no
     * metadata. An item that is there keeps its spelling, metadata, expiry and created index; its value
     * becomes the sum and its index the entry's. Answered {@link Result.Write} with the item after it.
     *
     * <p>Numbers are signed 64-bit integers: {@code delta} is any {@code long}, and the item's value must be a
     * JSON integer in that range (see {@link #integerOf}); else the add is answered {@link Result.NotAnInteger}.
     * A sum outside the range is answered {@link Result.Overflow}. Either writes nothing.
     *
     * <p>Alone only: a transaction's operations are conditions with writes, and an add is neither; the
     * codec refuses one inside a transaction.
     */
    record Add(String key, long delta) implements Command {
        private static final java.util.regex.Pattern INTEGER = java.util.regex.Pattern.compile("-?(0|[1-9][0-9]*)");

        @Override
        public void validate() {
            Keys.validateWritable(key);
        }

        @Override
        public Kind kind() {
            return Kind.ADD;
        }

        /**
         * The number {@code json} holds when it is a JSON integer in the signed 64-bit range (whitespace
         * around it allowed), else null: a string, an object, a number with a fraction or an exponent
         * ({@code 5.0}, {@code 1e3}), or an integer past the range.
         */
        public static Long integerOf(String json) {
            if (json == null) {
                return null;
            }
            String number = json.strip();
            if (number.isEmpty() || number.length() > 20 || !INTEGER.matcher(number).matches()) {
                return null;
            }
            try {
                return Long.parseLong(number);
            } catch (NumberFormatException e) {
                return null; // an integer past the range
            }
        }
    }

    /** A condition only: {@code key} must have {@code index} (0: be absent). Guards may be checked. */
    record Check(String key, long index) implements Op {
        @Override
        public void validate() {
            Keys.validate(key);
            checkIndex(index);
        }

        @Override
        public Op.Kind opKind() {
            return Op.Kind.CHECK;
        }
    }

    /** An operation on a document: its condition is on the document's Atomic Guard. */
    sealed interface DocumentOp extends Op permits PutDocument, DeleteDocument {
        String id();

        long guardIndex();

        @Override
        default String key() {
            return Document.guardKey(id());
        }

        @Override
        default long index() {
            return guardIndex();
        }
    }

    /**
     * Store a document and move its Atomic Guard in the same entry. {@code guardIndex} 0 creates the
     * document and its guard (create-only); otherwise it must equal the guard's current index.
     *
     * @param json compact JSON object text
     */
    record PutDocument(String id, String json, long guardIndex) implements DocumentOp {
        @Override
        public void validate() {
            checkDocumentId(id);
            checkIndex(guardIndex);
            Json.validateValue(json);
            if (!json.startsWith("{")) {
                throw new InvalidCommandException("document '" + id + "' must be a JSON object");
            }
        }

        @Override
        public Op.Kind opKind() {
            return Op.Kind.PUT_DOCUMENT;
        }
    }

    /** Delete a document and its Atomic Guard; {@code guardIndex} must equal the guard's index. */
    record DeleteDocument(String id, long guardIndex) implements DocumentOp {
        @Override
        public void validate() {
            checkDocumentId(id);
            if (guardIndex <= 0) {
                throw new InvalidCommandException("delete of document '" + id + "' needs its guard index, not " + guardIndex);
            }
        }

        @Override
        public Op.Kind opKind() {
            return Op.Kind.DELETE_DOCUMENT;
        }
    }

    /**
     * All conditions are evaluated first; then either every write applies at the entry's index, or none
     * does and every failed condition is reported.
     */
    record Transaction(List<Op> ops) implements Command {
        /** The most operations one transaction may carry. */
        public static final int MAX_OPS = 1024;

        public Transaction {
            ops = List.copyOf(ops);
        }

        @Override
        public void validate() {
            if (ops.isEmpty() || ops.size() > MAX_OPS) {
                throw new InvalidCommandException("a transaction carries 1.." + MAX_OPS + " operations, not " + ops.size());
            }
            Set<String> seen = new HashSet<>();
            for (Op op : ops) {
                op.validate();
                if (!seen.add(Keys.normalize(op.key()))) {
                    throw new InvalidCommandException("key '" + op.key() + "' appears twice in one transaction");
                }
            }
        }

        @Override
        public Kind kind() {
            return Kind.TRANSACTION;
        }
    }

    /**
     * The first phase of a transaction across groups (see docs/DESIGN.md, "Transactions across groups"):
     * this group's share of its operations, {@code ops}. When every condition holds and no key is held by
     * another transaction, each key gets an intent (the write to make, or for a check none) and is held:
     * writes to it are refused as {@link Result.Locked} and reads of it wait until the transaction is
     * settled here. When {@code holdsRecord}, this group is the primary and also keeps the transaction's
     * record, pending until {@code leaseMillis} of its cluster time pass, after which it may be aborted.
     * Preparing a transaction that holds its keys here already answers as the first prepare did.
     *
     * @param txn     the transaction's id, chosen by its coordinator (the client)
     * @param primary the group whose record decides the transaction
     * @param groups  every group the transaction writes or checks in, the primary among them
     */
    record Prepare(String txn, int primary, List<Integer> groups, long leaseMillis, boolean holdsRecord, List<Op> ops)
            implements Command {
        public static final long MIN_LEASE_MILLIS = 100;
        public static final long MAX_LEASE_MILLIS = 60_000;

        public Prepare {
            groups = List.copyOf(groups);
            ops = List.copyOf(ops);
        }

        @Override
        public void validate() {
            checkTxn(txn);
            if (groups.size() < 2 || groups.size() > Groups.MAX || new HashSet<>(groups).size() != groups.size()) {
                throw new InvalidCommandException("a transaction across groups names 2.." + Groups.MAX
                        + " distinct groups, not " + groups);
            }
            for (int g : groups) {
                if (g < 0 || g >= Groups.MAX) {
                    throw new InvalidCommandException("group " + g + " is not 0.." + (Groups.MAX - 1));
                }
            }
            if (!groups.contains(primary)) {
                throw new InvalidCommandException("the primary group " + primary + " is not among " + groups);
            }
            if (leaseMillis < MIN_LEASE_MILLIS || leaseMillis > MAX_LEASE_MILLIS) {
                throw new InvalidCommandException("a transaction's lease is " + MIN_LEASE_MILLIS + ".." + MAX_LEASE_MILLIS
                        + " ms, not " + leaseMillis);
            }
            new Transaction(ops).validate();
        }

        @Override
        public Kind kind() {
            return Kind.PREPARE;
        }
    }

    /**
     * A step after {@link Prepare}, named by the transaction's id. In the primary group (the one holding
     * the record) {@code COMMIT} and {@code ABORT} decide: a pending record becomes committed or aborted,
     * and a decided one stays as it is (the answer says which). In every group, once the outcome here is
     * known ({@code COMMIT} where no record is, or the record is committed; {@code ABORT} likewise), the
     * transaction's intents are settled: written at the index of their prepare, or dropped.
     * {@code EXPIRE} aborts a pending record only once its lease has run out in cluster time (how a
     * transaction whose coordinator went away is ended); {@code FORGET} drops a decided record once no
     * group holds the transaction's intents. Each step is idempotent.
     */
    record Settle(String txn, Step step) implements Command {
        /** What to do; tags on the wire after {@link Command.Kind#SETTLE}'s. */
        public enum Step implements WireKind {
            COMMIT(1), ABORT(2), EXPIRE(3), FORGET(4);

            private final byte tag;

            Step(int tag) {
                this.tag = (byte) tag;
            }

            @Override
            public byte tag() {
                return tag;
            }
        }

        @Override
        public void validate() {
            checkTxn(txn);
            if (step == null) {
                throw new InvalidCommandException("a settle step is commit, abort, expire or forget");
            }
        }

        @Override
        public Kind kind() {
            return Kind.SETTLE;
        }
    }

    /**
     * Holds every decision to commit a transaction across groups in this group (and every forget of a
     * record) until {@code millis} of cluster time pass, or lifts the hold when 0: how a backup of several
     * groups takes its consistent cut. Committing coordinators wait and try again; aborts go ahead.
     */
    record Fence(long millis) implements Command {
        public static final long MAX_MILLIS = 60_000;

        @Override
        public void validate() {
            if (millis < 0 || millis > MAX_MILLIS) {
                throw new InvalidCommandException("a fence lasts 0.." + MAX_MILLIS + " ms (0 lifts it), not " + millis);
            }
        }

        @Override
        public Kind kind() {
            return Kind.FENCE;
        }
    }

    /** The most characters a transaction id has. */
    int MAX_TXN_ID_CHARS = 64;

    /** Checks a transaction id: 1..64 of letters, digits, '-' and '_'. */
    static void checkTxn(String txn) {
        if (txn == null || txn.isEmpty() || txn.length() > MAX_TXN_ID_CHARS
                || !txn.chars().allMatch(c -> c < 128 && (Character.isLetterOrDigit(c) || c == '-' || c == '_'))) {
            throw new InvalidCommandException("a transaction id is 1.." + MAX_TXN_ID_CHARS
                    + " letters, digits, '-' or '_', not " + (txn == null ? "null" : "'" + txn + "'"));
        }
    }

    /**
     * Remove items that have expired: each is removed only if it still has the given index and has
     * expired at the entry's cluster time, so an item renewed after the sweep was proposed is kept.
     * The leader proposes it; apply decides.
     */
    record Sweep(List<KeyIndex> candidates) implements Command {
        public static final int MAX_CANDIDATES = 1024;

        public Sweep {
            candidates = List.copyOf(candidates);
        }

        @Override
        public void validate() {
            if (candidates.size() > MAX_CANDIDATES) {
                throw new InvalidCommandException("a sweep names at most " + MAX_CANDIDATES + " items");
            }
            candidates.forEach(c -> Keys.validate(c.key()));
        }

        @Override
        public Kind kind() {
            return Kind.SWEEP;
        }
    }

    /**
     * Opens client session {@code id} (chosen at random by the client, so a resent open names the same
     * session): it lives until {@code timeoutMillis} of cluster time pass without a write in it. Opening
     * a session that exists answers as the first open did.
     */
    record OpenSession(long id, long timeoutMillis) implements Command {
        public static final long MIN_TIMEOUT_MILLIS = 1_000;
        public static final long MAX_TIMEOUT_MILLIS = 3_600_000;

        @Override
        public void validate() {
            if (id == 0) {
                throw new InvalidCommandException("session id 0 names no session");
            }
            if (timeoutMillis < MIN_TIMEOUT_MILLIS || timeoutMillis > MAX_TIMEOUT_MILLIS) {
                throw new InvalidCommandException("session timeout must be " + MIN_TIMEOUT_MILLIS + " ms .. "
                        + MAX_TIMEOUT_MILLIS / 60_000 + " min, not " + timeoutMillis + " ms");
            }
        }

        @Override
        public Kind kind() {
            return Kind.OPEN_SESSION;
        }
    }

    /**
     * Sets the storage quota: writes that would take the state's size (see {@link Result.Quota}) over
     * {@code bytes} are refused from this entry on. Lowering it below what is in use refuses growth until
     * enough is deleted; nothing is removed. With {@code ifUnset}, it applies only when no quota was
     * ever set (how a node's configured quota is proposed at bootstrap without overriding an operator's).
     */
    record SetQuota(long bytes, boolean ifUnset) implements Command {
        @Override
        public void validate() {
            if (bytes < Limits.MIN_QUOTA_BYTES || bytes > Limits.MAX_QUOTA_BYTES) {
                throw new InvalidCommandException("quota must be " + Limits.MIN_QUOTA_BYTES + " .. "
                        + Limits.MAX_QUOTA_BYTES + " bytes (1 MiB .. 1 TiB), not " + bytes);
            }
        }

        @Override
        public Kind kind() {
            return Kind.SET_QUOTA;
        }
    }

    /**
     * A change to who may do what ({@link AuthTable}): only an administrator may make it once
     * authentication is on. Applied as {@link AuthTable#apply}: all or nothing.
     */
    sealed interface AuthChange extends Command {
        /** Which change this is: what code that applies or encodes changes switches on. */
        Kind changeKind();

        @Override
        default Command.Kind kind() {
            return Command.Kind.AUTH_CHANGE;
        }

        /** The kinds of change and their tags, written after {@link Command.Kind#AUTH_CHANGE}'s. */
        enum Kind implements WireKind {
            ENABLE(1), ADD_USER(2), REMOVE_USER(3), GRANT(4), REVOKE(5);

            private final byte tag;

            Kind(int tag) {
                this.tag = (byte) tag;
            }

            @Override
            public byte tag() {
                return tag;
            }
        }

        /** Turns authentication and permission checks on or off; on needs a user with admin on every key. */
        record Enable(boolean enabled) implements AuthChange {
            @Override
            public void validate() {
            }

            @Override
            public Kind changeKind() {
                return Kind.ENABLE;
            }
        }

        /** Adds user {@code name}, known by the SHA-256 (hex) of its token; the token itself never travels. */
        record AddUser(String name, String tokenHash, List<String> roles) implements AuthChange {
            public AddUser {
                roles = roles == null ? null : List.copyOf(roles);
            }

            @Override
            public void validate() {
                AuthTable.checkName("user", name);
                AuthTable.checkHash(tokenHash);
                if (roles == null) {
                    throw new InvalidCommandException("roles must not be null");
                }
                AuthTable.checkRoles(roles);
            }

            @Override
            public Kind changeKind() {
                return Kind.ADD_USER;
            }
        }

        /** Removes user {@code name}: its token stops working with this entry. */
        record RemoveUser(String name) implements AuthChange {
            @Override
            public void validate() {
                AuthTable.checkName("user", name);
            }

            @Override
            public Kind changeKind() {
                return Kind.REMOVE_USER;
            }
        }

        /** Grants {@code permission} on keys starting with {@code prefix} to {@code role} (creating the role). */
        record Grant(String role, AuthTable.Permission permission, String prefix) implements AuthChange {
            @Override
            public void validate() {
                checkGrant(role, permission, prefix);
            }

            @Override
            public Kind changeKind() {
                return Kind.GRANT;
            }
        }

        /** Takes a grant back; a role with no grants left is gone. */
        record Revoke(String role, AuthTable.Permission permission, String prefix) implements AuthChange {
            @Override
            public void validate() {
                checkGrant(role, permission, prefix);
            }

            @Override
            public Kind changeKind() {
                return Kind.REVOKE;
            }
        }

        private static void checkGrant(String role, AuthTable.Permission permission, String prefix) {
            AuthTable.checkName("role", role);
            if (role.equals(AuthTable.ROOT)) {
                throw new InvalidCommandException("the role '" + AuthTable.ROOT + "' is built in: admin on every key");
            }
            if (permission == null) {
                throw new InvalidCommandException("a grant needs a permission: read, write or admin");
            }
            if (prefix == null || prefix.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > Limits.MAX_KEY_BYTES) {
                throw new InvalidCommandException("a grant's prefix is at most " + Limits.MAX_KEY_BYTES + " bytes");
            }
        }
    }

    /** An item at an index. */
    record KeyIndex(String key, long index) {
    }

    private static void checkIndex(long index) {
        if (index < 0) {
            throw new InvalidCommandException("index must be 0 (create-only) or an item's index, not " + index);
        }
    }

    private static void checkDocumentId(String id) {
        if (id == null || id.isEmpty()) {
            throw new InvalidCommandException("document id must not be empty");
        }
        Keys.validate(Document.guardKey(id));
    }
}
