package io.ratchet.recipes.lock;

import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Limits;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What a {@link LeaseQueue} looks like: the keys of its entries, their order, the token an entry holds,
 * and a listing of the whole queue that stays consistent across pages. Reads only; the queue's writes
 * are {@link LeaseQueue}'s.
 */
final class QueueListing {
    /** The random part of an entry's key: 16 lower-case hex digits (64 bits). */
    static final int SUFFIX_LENGTH = 16;
    /** A listing of more than one page starts over when the queue moved between pages; this many times at most. */
    private static final int MAX_LIST_RESTARTS = 16;

    private final RatchetClient client;
    private final String prefix;
    private final String kind;
    /** Whether queues carry a {@code permits} item all holders must agree with (semaphores). */
    private final boolean configured;
    private final int pageSize;

    QueueListing(RatchetClient client, String prefix, String kind, boolean configured, int pageSize) {
        if (pageSize < 2 || pageSize > Limits.MAX_PAGE_SIZE) {
            throw new IllegalArgumentException("page size 2.." + Limits.MAX_PAGE_SIZE + ", not " + pageSize);
        }
        this.client = client;
        this.prefix = prefix;
        this.kind = kind;
        this.configured = configured;
        this.pageSize = pageSize;
    }

    /**
     * The prefix of queue {@code name}'s entries, {@code <prefix><name>/}; on a cluster of several groups
     * {@code <prefix>{<name>}/} unless the name or prefix holds a hash tag already. A queue's places and
     * fencing tokens are log indexes, which order the entries of one group only, so every entry of a
     * queue, and its permits item, must be in one group ({@link Groups}); the name makes the tag.
     *
     * @throws InvalidRequestException when the name is empty or makes keys the protocol refuses
     */
    String queuePrefix(String name) {
        if (name == null || name.isEmpty()) {
            throw invalid("a " + kind + " name must not be empty");
        }
        String queue = prefix + name + "/";
        if (!Groups.hasTag(queue) && client.groups() > 1) {
            queue = prefix + "{" + name + "}/";
        }
        try {
            Keys.validateWritable(queue + "0".repeat(SUFFIX_LENGTH));
        } catch (InvalidCommandException e) {
            throw invalid(kind + " name '" + LeaseKeeper.abbreviate(name) + "' does not make a valid key: " + e.getMessage());
        }
        return queue;
    }

    /** The item holding a semaphore's number of permits. */
    static String permitsKey(String queuePrefix) {
        return queuePrefix + "permits";
    }

    static String newKey(String queuePrefix) {
        byte[] random = new byte[SUFFIX_LENGTH / 2];
        ThreadLocalRandom.current().nextBytes(random);
        return queuePrefix + HexFormat.of().formatHex(random);
    }

    /** What follows the queue's prefix in {@code item}'s key (compared as keys are), or null when it is not under it. */
    private static String rest(String queuePrefix, Item item) {
        String key = Keys.normalize(item.key());
        String queue = Keys.normalize(queuePrefix);
        return key.startsWith(queue) ? key.substring(queue.length()) : null;
    }

    /** Whether {@code key} names an entry of the queue {@code queuePrefix}. */
    static boolean isEntryKey(String queuePrefix, String key) {
        String k = Keys.normalize(key);
        String queue = Keys.normalize(queuePrefix);
        return k.startsWith(queue) && isSuffix(k.substring(queue.length()));
    }

    private static boolean isSuffix(String s) {
        if (s.length() != SUFFIX_LENGTH) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    // ---- what the queue looks like

    /** The queue's order: by place, then (for places shared by one log entry) by key. */
    static final Comparator<Item> QUEUE_ORDER = Comparator.comparingLong(Item::createdIndex)
            .thenComparing(e -> Keys.normalize(e.key()));

    /** Whether entry {@code e} is ahead of the entry at {@code place} with {@code key} in the queue's order. */
    static boolean ahead(Item e, long place, String key) {
        return e.createdIndex() < place || e.createdIndex() == place && Keys.normalize(e.key()).compareTo(Keys.normalize(key)) < 0;
    }

    /**
     * The fencing token entry {@code e} holds: the {@code "token"} its renewals carry, or, right after its
     * turn write, that write's index; 0 while it waits.
     */
    static long tokenOf(Item e) {
        var value = e.valueNode();
        long token = value.path("token").asLong(0);
        if (token > 0) {
            return token;
        }
        return value.path("holding").asBoolean(false) ? e.index() : 0;
    }

    static LockHolder holderOf(String name, Item e) {
        return new LockHolder(name, LockHolder.ownerOf(e), tokenOf(e), e.index(), e.expiry());
    }

    static QueueEntry entryOf(String name, Item e) {
        return new QueueEntry(name, LockHolder.ownerOf(e), e.key(), e.createdIndex(), tokenOf(e), e.index(), e.expiry());
    }

    /**
     * A queue as one listing saw it.
     *
     * @param entries its entries by place (lowest first), present when listed, known-expired ones included
     * @param config  the {@code permits} item, or null
     */
    record View(List<Item> entries, Item config) {
        Item entry(String key) {
            String id = Keys.normalize(key);
            return entries.stream().filter(e -> Keys.normalize(e.key()).equals(id)).findFirst().orElse(null);
        }
    }

    CompletableFuture<View> view(String queuePrefix) {
        return listAll(queuePrefix, 0, new ArrayList<>(), null, 0).thenApply(items -> {
            List<Item> entries = new ArrayList<>();
            Item config = null;
            for (Item item : items) {
                String rest = rest(queuePrefix, item);
                if (rest == null) {
                    continue;
                }
                if (isSuffix(rest)) {
                    entries.add(item);
                } else if (configured && rest.equals("permits")) {
                    config = item;
                }
            }
            entries.sort(QUEUE_ORDER);
            return new View(List.copyOf(entries), config);
        });
    }

    /**
     * Every item under {@code queuePrefix}. A list is paged by offset, so between two pages an item deleted
     * before the boundary would shift an entry that was there all along past it unseen. Each page therefore
     * starts at the previous page's last item and must find it still there at the same offset: then the page
     * holds every key after it as of that read. If it moved, the listing starts over.
     */
    private CompletableFuture<List<Item>> listAll(String queuePrefix, int start, List<Item> seen, String lastKey,
                                                  int restarts) {
        return client.listAsync(queuePrefix, start, pageSize).thenCompose(page -> {
            List<Item> items = page;
            if (lastKey != null) {
                if (items.isEmpty() || !Keys.normalize(items.get(0).key()).equals(lastKey)) {
                    if (restarts >= MAX_LIST_RESTARTS) {
                        return CompletableFuture.failedFuture(new ClusterUnavailableException("the queue under '"
                                + queuePrefix + "' kept changing while it was listed (" + restarts + " tries)", null));
                    }
                    return listAll(queuePrefix, 0, new ArrayList<>(), null, restarts + 1);
                }
                items = items.subList(1, items.size());
            }
            seen.addAll(items);
            if (page.size() < pageSize) {
                return CompletableFuture.completedFuture(seen);
            }
            String last = Keys.normalize(page.get(page.size() - 1).key());
            return listAll(queuePrefix, start + pageSize - 1, seen, last, restarts);
        });
    }

    private static InvalidRequestException invalid(String message) {
        return LeaseKeeper.invalid(message);
    }
}
