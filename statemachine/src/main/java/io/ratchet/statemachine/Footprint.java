package io.ratchet.statemachine;

import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.util.List;

/**
 * What a piece of state counts for against the quota: the UTF-8 bytes of its text plus a fixed
 * overhead per object. A pure function of the state, never a question to the JVM, so every replica
 * counts the same, before and after a snapshot, and refuses the same writes.
 *
 * <p>The overheads are upper bounds of what the store really spends on the heap per object beyond its
 * text (the item's is checked by {@code ItemFootprintTest} and the {@code StoreFootprint} benchmark),
 * so a quota sized to the heap holds. Changing any number here changes which writes a cluster refuses:
 * every node of a cluster must run the same rules, as with any change to apply.
 */
final class Footprint {
    /** An item: its record array's header and fixed fields, and its entry in the sorted map. */
    static final long ITEM = 100;
    /** An item that expires: its place in the expiry order as well. */
    static final long EXPIRY = 64;
    /** A document: its map entry, its record and its strings' headers (its guard item counts as an item). */
    static final long DOCUMENT = 160;
    /** A remembered idempotent request: its map entries, its record and its key's headers. */
    static final long REMEMBERED = 160;
    /** An open client session: its map entries and its record. */
    static final long SESSION = 160;
    /** One result held for a resend: its record and its list slot. */
    static final long RESULT = 48;
    /** More than a ttl's expiry field adds to an item's metadata ({@code "expiresAt":"<instant>"} and a comma). */
    private static final long MOST_EXPIRY_FIELD = 64;
    /** The longest a signed 64-bit integer is as JSON text ({@code -9223372036854775808}). */
    private static final long MOST_INTEGER_CHARS = 20;

    private Footprint() {
    }

    static long item(Item item) {
        if (item == null) {
            return 0;
        }
        String id = Keys.normalize(item.key());
        return item(utf8(id), id.equals(item.key()) ? 0 : utf8(item.key()), utf8(item.value()),
                utf8(item.metadata()), item.expiresAt() != 0);
    }

    /** An item by the lengths of its parts: its normalized key, its spelling when that differs (else 0), value and metadata. */
    static long item(int keyBytes, int spellingBytes, int valueBytes, int metadataBytes, boolean expires) {
        return ITEM + keyBytes + spellingBytes + valueBytes + metadataBytes + (expires ? EXPIRY : 0);
    }

    static long document(Document document) {
        return document == null ? 0 : DOCUMENT + 2L * utf8(document.id()) + utf8(document.json());
    }

    static long remembered(String idempotencyKey, List<Result> results) {
        return REMEMBERED + utf8(idempotencyKey) + results(results);
    }

    static long session(List<Result> lastResults) {
        return SESSION + results(lastResults);
    }

    static long results(List<Result> results) {
        if (results == null) {
            return 0;
        }
        long sum = 0;
        for (Result result : results) {
            sum += result(result);
        }
        return sum;
    }

    private static long result(Result result) {
        return switch (result.kind()) {
            case WRITE -> {
                Result.Write w = (Result.Write) result;
                yield RESULT + utf8(w.key()) + (w.item() == null ? 0 : item(w.item()));
            }
            case TXN -> {
                long sum = RESULT;
                for (Result.Conflict c : ((Result.Txn) result).conflicts()) {
                    sum += RESULT + utf8(c.key());
                }
                yield sum;
            }
            case REJECTED -> RESULT + utf8(((Result.Rejected) result).reason());
            case FENCED -> RESULT;
            case TXN_STATE -> RESULT + utf8(((Result.TxnState) result).txn());
            case LOCKED -> RESULT + utf8(((Result.Locked) result).key()) + utf8(((Result.Locked) result).txn());
            case NOT_AN_INTEGER -> RESULT + utf8(((Result.NotAnInteger) result).key()) + item(((Result.NotAnInteger) result).item());
            case OVERFLOW -> RESULT + utf8(((Result.Overflow) result).key()) + item(((Result.Overflow) result).item());
            case FOUND, ITEMS, STATS, SWEPT, WATCHED, DOCUMENT_FOUND, SESSION_OPENED, SESSION_EXPIRED, CONTENTION,
                    QUOTA_EXCEEDED, QUOTA, AUTH_STATE, DISK_FULL, SHAPE, UNSUPPORTED -> RESULT;
        };
    }

    /**
     * More than the writes of {@code batch} can add to the count, whatever the state: a bound from the
     * batch alone, read without the store. Loose on purpose (each char counted as 3 bytes, keys many times
     * over for their normalized form and spelling, a ttl's expiry field, a document's guard), because it
     * only tells the leader it need not look: while the state is further than this under its quota, no
     * write of the batch can be refused for it.
     */
    static long mostGrowth(Batch batch) {
        long sum = 0;
        for (Request request : batch.requests()) {
            for (Command command : request.commands()) {
                if (command instanceof Command.Add add) {
                    // At most a new item: its key (normalized and spelt) and an integer of at most 20 characters.
                    sum += ITEM + 9L * add.key().length() + MOST_INTEGER_CHARS;
                }
                for (Command.Op op : CompareExchangeStore.ops(command)) {
                    sum += mostGrowth(op);
                }
            }
        }
        return sum;
    }

    private static long mostGrowth(Command.Op op) {
        return switch (op.opKind()) {
            case PUT -> {
                Command.Put p = (Command.Put) op;
                yield ITEM + EXPIRY + MOST_EXPIRY_FIELD + 9L * p.key().length() + chars(p.value()) + chars(p.metadata());
            }
            case PUT_DOCUMENT -> {
                // The document (its id twice and its JSON) and its guard item (the prefixed id as key, {"Id": id} as value).
                Command.PutDocument d = (Command.PutDocument) op;
                yield DOCUMENT + ITEM + 9L * (Limits.RESERVED_GUARD_PREFIX.length() + d.id().length()) + 2 * chars(d.id())
                        + 6L * d.id().length() + 16 + chars(d.json());
            }
            case DELETE, DELETE_DOCUMENT, CHECK -> 0; // they add nothing
        };
    }

    /** The most UTF-8 bytes {@code s} takes (3 a char), without looking at its chars. */
    private static long chars(String s) {
        return s == null ? 0 : 3L * s.length();
    }

    /** The UTF-8 length of {@code s} (0 for null), as {@code String.getBytes(UTF_8)} gives it, without encoding it. */
    static int utf8(String s) {
        if (s == null) {
            return 0;
        }
        int n = s.length();
        int bytes = n;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                if (c < 0x800) {
                    bytes += 1;
                } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    bytes += 2; // the pair's 4 bytes, for 2 chars
                    i++;
                } else if (!Character.isSurrogate(c)) {
                    bytes += 2;
                } // a lone surrogate encodes as one '?', exactly as String.getBytes(UTF_8) does
            }
        }
        return bytes;
    }
}
