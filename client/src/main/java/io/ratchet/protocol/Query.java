package io.ratchet.protocol;

import java.util.List;

/** A read. Queries never change state and never enter the Raft log. */
public sealed interface Query permits Query.Get, Query.GetAll, Query.ListItems, Query.Stats {

    void validate();

    record Get(String key) implements Query {
        @Override
        public void validate() {
            Keys.validate(key);
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
    }

    /** The node's view of the store: applied index, cluster time, item count. */
    record Stats() implements Query {
        @Override
        public void validate() {
        }
    }
}
