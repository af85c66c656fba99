package io.ratchet.spring.integration;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Keys;
import java.util.ConcurrentModificationException;
import java.util.Objects;
import java.util.Optional;
import org.springframework.integration.metadata.ConcurrentMetadataStore;

/**
 * Spring Integration's {@link ConcurrentMetadataStore} on a Ratchet cluster: each entry is the item
 * {@code <prefix><key>} (prefix {@value #DEFAULT_PREFIX} unless told otherwise) whose value is the entry's
 * string as a JSON string. Every change is one compare-exchange, linearizable, so idempotent receivers and
 * file/feed adapters of several processes share one view.
 *
 * <p>Atomicity comes from the item's index, which changes with every write: {@link #putIfAbsent} is a
 * create-only put (index 0), which the cluster refuses if the item exists; {@link #replace} reads the item
 * and puts at the index it read, which the cluster refuses if anything wrote the item in between, so the
 * value it compared is the value it replaces. {@link #put} and {@link #remove} also write at the index read,
 * and read again after a conflict (at most {@value #MAX_ATTEMPTS} attempts).
 *
 * <p>Keys compare case-insensitively, as Ratchet keys do: {@code "Feed"} and {@code "feed"} are one entry.
 * A key must be non-empty and make a valid Ratchet key with the prefix (at most 512 UTF-8 bytes, not under
 * {@code rvn-atomic/}); otherwise {@link IllegalArgumentException}. Keys and values must not be null
 * ({@link IllegalArgumentException}, as Spring's stores assert). An item under the prefix whose value is not a
 * JSON string was not written by this store: reading it throws {@link IllegalStateException}.
 *
 * <p>Errors of the cluster are Ratchet's unchecked exceptions; an {@link UnknownOutcomeException} from
 * {@link #putIfAbsent}, {@link #replace} or {@link #remove} means the write may have been applied (read
 * the entry to find out). {@link #put} sets the same value however often it is applied, so it retries that.
 */
public class RatchetMetadataStore implements ConcurrentMetadataStore {
    /** Entries live under this prefix unless told otherwise. */
    public static final String DEFAULT_PREFIX = "metadata/";
    /** Writes that meet a concurrent change are tried again this many times in all. */
    public static final int MAX_ATTEMPTS = 16;

    private final RatchetClient client;
    private final String prefix;

    /** Entries under {@link #DEFAULT_PREFIX}. */
    public RatchetMetadataStore(RatchetClient client) {
        this(client, DEFAULT_PREFIX);
    }

    /** Entries under {@code prefix} ({@code ""} for none). */
    public RatchetMetadataStore(RatchetClient client, String prefix) {
        this.client = Objects.requireNonNull(client, "client");
        this.prefix = Objects.requireNonNull(prefix, "prefix");
    }

    public String getPrefix() {
        return prefix;
    }

    /**
     * Sets {@code key} to {@code value}, whatever it was: a create-only put when absent, else a put at the
     * index read; after a conflict (a concurrent write), again at the index the conflict reported.
     *
     * @throws ConcurrentModificationException when {@value #MAX_ATTEMPTS} attempts in a row met a concurrent write
     */
    @Override
    public void put(String key, String value) {
        String itemKey = itemKey(key);
        requireValue("value", value);
        Optional<Item> current = client.get(itemKey);
        for (int attempt = 1; ; attempt++) {
            CompareExchangeResult r;
            try {
                r = client.put(itemKey, value, current.map(Item::index).orElse(0L));
            } catch (UnknownOutcomeException e) {
                // The same value again is harmless whether or not the first was applied: read and retry.
                if (attempt >= MAX_ATTEMPTS) {
                    throw e;
                }
                current = client.get(itemKey);
                continue;
            }
            if (r.successful()) {
                return;
            }
            if (attempt >= MAX_ATTEMPTS) {
                throw contended("put", key);
            }
            current = Optional.ofNullable(r.item());
        }
    }

    /** The value of {@code key}, or null when it has none (a linearizable read). */
    @Override
    public String get(String key) {
        return client.get(itemKey(key)).map(this::valueOf).orElse(null);
    }

    /**
     * Removes {@code key}: a delete at the index read; returns the value it removed, or null when there was
     * none. After a conflict, again at the index the conflict reported.
     *
     * @throws ConcurrentModificationException when {@value #MAX_ATTEMPTS} attempts in a row met a concurrent write
     */
    @Override
    public String remove(String key) {
        String itemKey = itemKey(key);
        Item current = client.get(itemKey).orElse(null);
        for (int attempt = 1; ; attempt++) {
            if (current == null) {
                return null;
            }
            CompareExchangeResult r = client.delete(itemKey, current.index());
            if (r.successful()) {
                return valueOf(current);
            }
            if (attempt >= MAX_ATTEMPTS) {
                throw contended("remove", key);
            }
            current = r.item();
        }
    }

    /**
     * Sets {@code key} to {@code value} only if it has no value: a create-only put (index 0), which the
     * cluster refuses when the item exists.
     *
     * @return null when this call set it, else the value it has
     */
    @Override
    public String putIfAbsent(String key, String value) {
        String itemKey = itemKey(key);
        requireValue("value", value);
        for (int attempt = 1; ; attempt++) {
            CompareExchangeResult r = client.put(itemKey, value, 0);
            if (r.successful()) {
                return null;
            }
            if (r.item() != null) {
                return valueOf(r.item());
            }
            // Refused, yet nothing there (an item that ran out, gone meanwhile): try again.
            if (attempt >= MAX_ATTEMPTS) {
                throw contended("putIfAbsent", key);
            }
        }
    }

    /**
     * Sets {@code key} to {@code newValue} only if its value is {@code oldValue}: reads the item and, if its
     * value equals {@code oldValue}, puts at the index it read. The condition on the index is what makes this
     * atomic: the cluster applies the put only if no write touched the item since the read, so the value
     * compared is the value replaced. When a concurrent write got in first, the item it left decides: a
     * different value makes this {@code false}; the same value (written again) is compared and put again.
     *
     * @return true when this call replaced the value; false when the key has no value, or another
     */
    @Override
    public boolean replace(String key, String oldValue, String newValue) {
        String itemKey = itemKey(key);
        requireValue("oldValue", oldValue);
        requireValue("newValue", newValue);
        Item current = client.get(itemKey).orElse(null);
        for (int attempt = 1; ; attempt++) {
            if (current == null || !oldValue.equals(valueOf(current))) {
                return false;
            }
            CompareExchangeResult r = client.put(itemKey, newValue, current.index());
            if (r.successful()) {
                return true;
            }
            if (attempt >= MAX_ATTEMPTS) {
                throw contended("replace", key);
            }
            current = r.item();
        }
    }

    /**
     * The Ratchet key of entry {@code key}: the prefix and the key.
     *
     * @throws IllegalArgumentException when the key is null, empty or does not make a valid Ratchet key
     */
    public String itemKey(String key) {
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("a metadata key must not be " + (key == null ? "null" : "empty"));
        }
        String itemKey = prefix + key;
        try {
            return Keys.validateWritable(itemKey);
        } catch (InvalidCommandException e) {
            throw new IllegalArgumentException("metadata key '" + abbreviate(key) + "' does not make a valid Ratchet key"
                    + " with the prefix '" + prefix + "': " + e.getMessage(), e);
        }
    }

    private String valueOf(Item item) {
        JsonNode value = item.valueNode();
        if (value == null || !value.isTextual()) {
            throw new IllegalStateException("the item '" + item.key() + "' holds " + abbreviate(item.value())
                    + ", not a JSON string: it was not written by a metadata store");
        }
        return value.asText();
    }

    private static void requireValue(String what, String value) {
        if (value == null) {
            throw new IllegalArgumentException("'" + what + "' must not be null");
        }
    }

    private static ConcurrentModificationException contended(String operation, String key) {
        return new ConcurrentModificationException(operation + " of metadata key '" + abbreviate(key) + "' met a"
                + " concurrent write " + MAX_ATTEMPTS + " times in a row; nothing was written");
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...(" + s.length() + " chars)";
    }

    @Override
    public String toString() {
        return "RatchetMetadataStore[prefix='" + prefix + "']";
    }
}
