package io.ratchet.protocol;

import java.util.List;

/** What a node answers to a command or query. A failed condition is a normal result, not an error. */
public sealed interface Result permits Result.Write, Result.Txn, Result.Swept, Result.Rejected, Result.Found,
        Result.Items, Result.Stats, Result.Watched, Result.DocumentFound, Result.SessionOpened,
        Result.SessionExpired, Result.Contention, Result.QuotaExceeded, Result.DiskFull, Result.Quota, Result.AuthState, Result.Shape,
        Result.TxnState, Result.Locked, Result.Fenced, Result.NotAnInteger, Result.Overflow, Result.Unsupported {

    /** Which result this is: what code that reads or encodes results switches on (see {@link WireKind}). */
    Kind kind();

    /** The kinds of result and their tags. */
    enum Kind implements WireKind {
        WRITE(1), REJECTED(2), FOUND(3), ITEMS(4), STATS(5), TXN(6), SWEPT(7), WATCHED(8), DOCUMENT_FOUND(9),
        SESSION_OPENED(10), SESSION_EXPIRED(11), CONTENTION(12), QUOTA_EXCEEDED(13), QUOTA(14), AUTH_STATE(15),
        DISK_FULL(16), SHAPE(17), TXN_STATE(18), LOCKED(19), FENCED(20), NOT_AN_INTEGER(21), OVERFLOW(22), UNSUPPORTED(23);

        private final byte tag;

        Kind(int tag) {
            this.tag = (byte) tag;
        }

        @Override
        public byte tag() {
            return tag;
        }
    }

    /**
     * The outcome of a put or delete. On success, {@code item} is the state after it (null after a
     * delete); on a failed condition, the item's current state (null when absent), so a retry can
     * recompute without another read.
     */
    record Write(boolean successful, String key, Item item) implements Result {
        /** The item's index after a success, its current index after a failure; 0 when absent. */
        public long index() {
            return item == null ? 0 : item.index();
        }

        @Override
        public Kind kind() {
            return Kind.WRITE;
        }
    }

    /** A transaction: on success every write is at {@code index}; on failure nothing applied and {@code conflicts} says why. */
    record Txn(boolean successful, long index, List<Conflict> conflicts) implements Result {
        public Txn {
            conflicts = List.copyOf(conflicts);
        }

        @Override
        public Kind kind() {
            return Kind.TXN;
        }
    }

    /** A failed condition in a transaction: the index the op expected and the one the item has (0: absent). */
    record Conflict(String key, long expected, long actual) {
    }

    /** How many expired items a sweep removed. */
    record Swept(int removed) implements Result {
        @Override
        public Kind kind() {
            return Kind.SWEPT;
        }
    }

    /** A command the node refused as invalid; nothing was written. */
    record Rejected(String reason) implements Result {
        @Override
        public Kind kind() {
            return Kind.REJECTED;
        }
    }

    /** The answer to a get: the item, or null when the key is absent. */
    record Found(Item item) implements Result {
        @Override
        public Kind kind() {
            return Kind.FOUND;
        }
    }

    /** Items in key order. */
    record Items(List<Item> items) implements Result {
        public Items {
            items = List.copyOf(items);
        }

        @Override
        public Kind kind() {
            return Kind.ITEMS;
        }
    }

    /**
     * A node's applied index, cluster time (epoch milliseconds), item count, and the state's size and
     * quota (see {@link Quota}).
     */
    record Stats(long appliedIndex, long clusterTime, long itemCount, long usedBytes, long quotaBytes)
            implements Result {
        @Override
        public Kind kind() {
            return Kind.STATS;
        }
    }

    /**
     * A watch's answer: whether the key changed after the watched index, the index of its last known
     * change, and its current state (null when absent).
     */
    record Watched(boolean changed, long lastChange, Item item) implements Result {
        @Override
        public Kind kind() {
            return Kind.WATCHED;
        }
    }

    /** A document, or null when there is none under the id. */
    record DocumentFound(Document document) implements Result {
        @Override
        public Kind kind() {
            return Kind.DOCUMENT_FOUND;
        }
    }

    /** A client session is open: its id and how long it lives without a write. */
    record SessionOpened(long session, long timeoutMillis) implements Result {
        @Override
        public Kind kind() {
            return Kind.SESSION_OPENED;
        }
    }

    /**
     * The batch named a session that does not exist (never opened, or expired after its timeout of
     * cluster time without a write): nothing in it was applied.
     */
    record SessionExpired(long session) implements Result {
        @Override
        public Kind kind() {
            return Kind.SESSION_EXPIRED;
        }
    }

    /**
     * A node's count of contended keys since {@code since} (epoch milliseconds, the node's start), most
     * refused first.
     */
    record Contention(long since, List<KeyContention> keys) implements Result {
        public Contention {
            keys = List.copyOf(keys);
        }

        @Override
        public Kind kind() {
            return Kind.CONTENTION;
        }
    }

    /**
     * A write refused because it would take the state over its quota; nothing was written. Deletes,
     * and writes that do not grow the state, are never refused this way.
     *
     * @param used   the state's size before the write, in the quota's units
     * @param quota  the quota
     * @param needed how much the write would have added
     */
    record QuotaExceeded(long used, long quota, long needed) implements Result {
        @Override
        public Kind kind() {
            return Kind.QUOTA_EXCEEDED;
        }
    }

    /**
     * A write that would add to the state, refused by the leader before the log because the disk that
     * holds its store has less free space than its floor: nothing written, on any node. Not a result of
     * apply (free space differs between nodes): only the leader's front end answers it.
     *
     * @param node       the leader that refused it
     * @param freeBytes  the free space it had
     * @param floorBytes the free space under which it refuses such writes
     */
    record DiskFull(String node, long freeBytes, long floorBytes) implements Result {
        @Override
        public Kind kind() {
            return Kind.DISK_FULL;
        }
    }

    /** The permission table after a change, or as asked for; token hashes are left out. */
    record AuthState(AuthTable table) implements Result {
        @Override
        public Kind kind() {
            return Kind.AUTH_STATE;
        }
    }

    /**
     * The state's size and its quota. Size is counted in fixed units, never asked of the JVM: the UTF-8
     * bytes of keys, values and metadata, documents, idempotency results and sessions, plus a fixed
     * overhead for each, so every replica counts the same.
     */
    record Quota(long used, long quota) implements Result {
        /** Whether {@code used} has reached {@link Limits#QUOTA_ALARM_PERCENT} of {@code quota}. */
        public static boolean alarm(long used, long quota) {
            return used * 100 >= quota * Limits.QUOTA_ALARM_PERCENT;
        }

        public boolean alarm() {
            return alarm(used, quota);
        }

        @Override
        public Kind kind() {
            return Kind.QUOTA;
        }
    }

    /** One key's conditions: tried, held with their write applied, and refused. */
    record KeyContention(String key, long attempts, long commits, long refused) {
        /** Attempts per commit; null for a key that never committed. */
        public Double attemptsPerCommit() {
            return commits == 0 ? null : (double) attempts / commits;
        }
    }

    /**
     * The answer to {@link Query.Shape}: one entry per group, in group order, each the client address of
     * the group's leader as the answering node knows it, or empty when it knows none.
     */
    record Shape(List<String> leaders) implements Result {
        public Shape {
            leaders = List.copyOf(leaders);
        }

        /** How many groups the cluster has. */
        public int groups() {
            return leaders.size();
        }

        @Override
        public Kind kind() {
            return Kind.SHAPE;
        }
    }

    /**
     * A transaction across groups as one group sees it: its record there ({@link Record#NONE} outside the
     * primary, or once forgotten), how many of its intents the group holds, and for a prepare the index its
     * writes will have in this group (the prepare's log index; 0 otherwise).
     */
    record TxnState(String txn, Record record, int intents, long index) implements Result {
        /** The states of a transaction's record; tags on the wire. */
        public enum Record implements WireKind {
            NONE(0), PENDING(1), COMMITTED(2), ABORTED(3);

            private final byte tag;

            Record(int tag) {
                this.tag = (byte) tag;
            }

            @Override
            public byte tag() {
                return tag;
            }
        }

        @Override
        public Kind kind() {
            return Kind.TXN_STATE;
        }
    }

    /**
     * A request refused whole because {@code key} is held by transaction {@code txn} across groups, between
     * its prepare and its settling here: nothing of the request applied. Sent again once the transaction is
     * settled (the coordinator's next step, or the cluster's recovery after its lease), it applies as usual.
     * Also a batched get's answer for a held key: a batch waits for nobody; asked alone, the get waits.
     */
    record Locked(String key, String txn) implements Result {
        @Override
        public Kind kind() {
            return Kind.LOCKED;
        }
    }

    /**
     * Commits across groups are held in this group until cluster time {@code until} (0: not held): the
     * answer to a {@link Command.Fence}, and to a decision to commit, or a forget, that the fence held back.
     */
    record Fenced(long until) implements Result {
        @Override
        public Kind kind() {
            return Kind.FENCED;
        }
    }

    /**
     * An {@link Command.Add} refused because the item under {@code key} does not hold a JSON integer in the
     * signed 64-bit range (a string, an object, {@code 1.5}, {@code 5.0}, an integer past the range):
     * nothing was written. {@code item} is the item as it is.
     */
    record NotAnInteger(String key, Item item) implements Result {
        @Override
        public Kind kind() {
            return Kind.NOT_AN_INTEGER;
        }
    }

    /**
     * An {@link Command.Add} refused because the sum of the item's value and {@code delta} is outside the
     * signed 64-bit range: nothing was written. {@code item} is the item as it is.
     */
    record Overflow(String key, Item item, long delta) implements Result {
        @Override
        public Kind kind() {
            return Kind.OVERFLOW;
        }
    }

    /**
     * A message refused by the leader's front end, before the log, because it carries a command that some
     * member of the group may not be able to apply: a node of an earlier release during a rolling upgrade
     * (docs/DESIGN.md, "Versions and upgrades"). Nothing of the message was written; every command of it
     * gets this answer. Not a result of apply.
     *
     * @param command the command's name, as the wire tables give it ({@code add})
     * @param reason  for people: which member, and what to do
     */
    record Unsupported(String command, String reason) implements Result {
        @Override
        public Kind kind() {
            return Kind.UNSUPPORTED;
        }
    }
}
