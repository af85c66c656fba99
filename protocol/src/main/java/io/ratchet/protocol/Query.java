package io.ratchet.protocol;

import java.util.List;

/** A read. Queries never change state and never enter the Raft log. */
public sealed interface Query permits Query.Get, Query.GetAll, Query.ListItems, Query.Stats, Query.Watch,
        Query.GetDocument, Query.Gets, Query.Contention, Query.AuthStatus, Query.Shape,
        Query.TxnStatus {

    /** Which query this is: what code that serves or encodes queries switches on (see {@link WireKind}). */
    Kind kind();

    void validate();

    /** The kinds of query and their tags. */
    enum Kind implements WireKind {
        GET(1), GET_ALL(2), LIST_ITEMS(3), STATS(4), WATCH(5), GET_DOCUMENT(6), GETS(7), CONTENTION(8), AUTH_STATUS(9), SHAPE(10), TXN_STATUS(11);

        private final byte tag;

        Kind(int tag) {
            this.tag = (byte) tag;
        }

        @Override
        public byte tag() {
            return tag;
        }
    }

    record Get(String key) implements Query {
        @Override
        public void validate() {
            Keys.validate(key);
        }

        @Override
        public Kind kind() {
            return Kind.GET;
        }
    }

    record GetAll(List<String> keys) implements Query {
        public GetAll {
            keys = List.copyOf(keys);
        }

        @Override
        public void validate() {
            if (keys.size() > Limits.MAX_GET_ALL_KEYS) {
                throw new InvalidCommandException("getAll names " + keys.size() + " keys; the limit is "
                        + Limits.MAX_GET_ALL_KEYS);
            }
            keys.forEach(Keys::validate);
        }

        @Override
        public Kind kind() {
            return Kind.GET_ALL;
        }
    }

    /**
     * Items whose key starts with {@code prefix} (case-insensitively; empty for all), in key order,
     * skipping the first {@code start} of them and returning at most {@code pageSize}.
     */
    record ListItems(String prefix, int start, int pageSize) implements Query {
        public ListItems {
            prefix = prefix == null ? "" : prefix;
        }

        @Override
        public void validate() {
            if (!prefix.isEmpty()) {
                Keys.validate(prefix);
            }
            if (start < 0) {
                throw new InvalidCommandException("start must be 0 or more, not " + start);
            }
            if (pageSize < 1 || pageSize > Limits.MAX_PAGE_SIZE) {
                throw new InvalidCommandException("page size must be 1.." + Limits.MAX_PAGE_SIZE + ", not " + pageSize);
            }
        }

        @Override
        public Kind kind() {
            return Kind.LIST_ITEMS;
        }
    }

    /**
     * The node's count of contended keys: the {@code limit} keys whose conditions were refused most
     * often since it started (not replicated state; every node applies the same entries, so any node
     * counts alike).
     */
    record Contention(int limit) implements Query {
        @Override
        public void validate() {
            if (limit < 1 || limit > Limits.MAX_PAGE_SIZE) {
                throw new InvalidCommandException("a contention query asks for 1.." + Limits.MAX_PAGE_SIZE + " keys, not " + limit);
            }
        }

        @Override
        public Kind kind() {
            return Kind.CONTENTION;
        }
    }

    /** The node's view of the store: applied index, cluster time, item count, size and quota. */
    record Stats() implements Query {
        @Override
        public void validate() {
        }

        @Override
        public Kind kind() {
            return Kind.STATS;
        }
    }

    /**
     * The cluster's groups ({@link Groups}): how many, and the client address of each one's leader as the
     * node asked knows it. The front end answers it from its own state, at once; a client asks once, before
     * its first call that names a key.
     */
    record Shape() implements Query {
        @Override
        public void validate() {
        }

        @Override
        public Kind kind() {
            return Kind.SHAPE;
        }
    }

    /**
     * Transactions across groups as this group sees them: one {@link Result.TxnState} each, in order. How a
     * group's leader learns an outcome, or whether other groups still hold a transaction's intents.
     */
    record TxnStatus(List<String> txns) implements Query {
        public static final int MAX_TXNS = 1024;

        public TxnStatus {
            txns = List.copyOf(txns);
        }

        @Override
        public void validate() {
            if (txns.isEmpty() || txns.size() > MAX_TXNS) {
                throw new InvalidCommandException("a status question names 1.." + MAX_TXNS + " transactions, not " + txns.size());
            }
            txns.forEach(Command::checkTxn);
        }

        @Override
        public Kind kind() {
            return Kind.TXN_STATUS;
        }
    }

    /** Whether authentication is on, the users (without their token hashes) and the roles. */
    record AuthStatus() implements Query {
        @Override
        public void validate() {
        }

        @Override
        public Kind kind() {
            return Kind.AUTH_STATUS;
        }
    }

    /**
     * Answers as soon as {@code key} is put or deleted at an index above {@code afterIndex}, or when
     * {@code timeoutMillis} pass, with the key's state then. It may answer early (a change it can no
     * longer rule out); callers re-check the state it returns.
     */
    record Watch(String key, long afterIndex, long timeoutMillis) implements Query {
        @Override
        public void validate() {
            Keys.validate(key);
            if (afterIndex < 0) {
                throw new InvalidCommandException("watch needs an index of 0 or more, not " + afterIndex);
            }
            if (timeoutMillis <= 0 || timeoutMillis > Limits.MAX_WATCH_SECONDS * 1000L) {
                throw new InvalidCommandException("watch timeout must be 1 ms .. " + Limits.MAX_WATCH_SECONDS + " s, not "
                        + timeoutMillis + " ms");
            }
        }

        @Override
        public Kind kind() {
            return Kind.WATCH;
        }
    }

    /** A document and its guard index. */
    record GetDocument(String id) implements Query {
        @Override
        public void validate() {
            if (id == null || id.isEmpty()) {
                throw new InvalidCommandException("document id must not be empty");
            }
            Keys.validate(Document.guardKey(id));
        }

        @Override
        public Kind kind() {
            return Kind.GET_DOCUMENT;
        }
    }

    /**
     * Several gets served together, under one ReadIndex and one message: what a client sends for the
     * gets that queue up while one is in flight. Each answers as if alone, in order; a result per get.
     */
    record Gets(List<Get> gets) implements Query {
        /** Bounds the reply: each item may carry 2 MiB of value and metadata. */
        public static final int MAX_GETS = 16;

        public Gets {
            gets = List.copyOf(gets);
        }

        @Override
        public void validate() {
            if (gets.isEmpty() || gets.size() > MAX_GETS) {
                throw new InvalidCommandException("a batch of gets carries 1.." + MAX_GETS + " gets, not " + gets.size());
            }
            gets.forEach(Get::validate);
        }

        @Override
        public Kind kind() {
            return Kind.GETS;
        }
    }
}
