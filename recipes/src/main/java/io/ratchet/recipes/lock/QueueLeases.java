package io.ratchet.recipes.lock;

import static io.ratchet.recipes.lock.LeaseKeeper.abbreviate;
import static io.ratchet.recipes.lock.LeaseKeeper.checked;
import static io.ratchet.recipes.lock.LeaseKeeper.invalid;

import io.ratchet.client.InvalidRequestException;
import io.ratchet.protocol.Item;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Renewing and releasing a lease on a {@link LeaseQueue} entry, given the lease or, for a holder that
 * kept only the index (a command line), the queue's name and the entry's index. A renewal is a put at the
 * entry's current index (refused once it ran out), a release a delete there: the index is the atomic check,
 * so another holder's entry is never touched. The entry's value says whether it waits or holds.
 */
final class QueueLeases {
    private final LeaseKeeper keeper;
    private final QueueListing listing;
    private final SeenClusterTime seen;
    private final String kind;

    QueueLeases(LeaseKeeper keeper, QueueListing listing, SeenClusterTime seen, String kind) {
        this.keeper = keeper;
        this.listing = listing;
        this.seen = seen;
        this.kind = kind;
    }

    CompletableFuture<QueueLease> renew(QueueLease lease, Duration duration) {
        return checked(() -> {
            requireLease(lease);
            Duration granted = keeper.granted(duration);
            Map<String, Object> value = lease.fencingToken() > 0 ? holding(lease.owner(), lease.fencingToken()) : waiting(lease.owner());
            return keeper.renew(lease.name(), lease.key(), value, lease.currentIndex(), lease.place(), granted,
                    now -> lostLease(lease.name(), lease.currentIndex(), now), r -> seen.learn(r.item(), granted.toMillis()))
                    .thenApply(r -> new QueueLease(lease.name(), lease.owner(), lease.key(), r.createdIndex(),
                            lease.fencingToken(), r.index(), Instant.ofEpochMilli(r.expiresAt()), granted));
        });
    }

    CompletableFuture<Void> release(QueueLease lease) {
        return checked(() -> {
            requireLease(lease);
            return keeper.client().deleteAsync(lease.key(), lease.currentIndex()).thenCompose(r -> r.successful()
                    ? CompletableFuture.completedFuture(null)
                    : lostLease(lease.name(), lease.currentIndex(), r.item()).thenApply(ignored -> null));
        });
    }

    /**
     * Renews the entry at {@code index} in {@code name}'s queue, for a holder that kept only the index (a
     * command line): lists the queue for its entry, then renews at that index, which is the atomic check.
     */
    CompletableFuture<QueueLease> renewAt(String name, long index, Duration duration) {
        return checked(() -> {
            listing.queuePrefix(name);
            keeper.granted(duration);
            requireIndex(name, index);
            return leaseAt(name, index, duration).thenCompose(found -> renew(found, duration));
        });
    }

    /** Releases the entry at {@code index} in {@code name}'s queue, for a holder that kept only the index. */
    CompletableFuture<Void> releaseAt(String name, long index) {
        return checked(() -> {
            listing.queuePrefix(name);
            requireIndex(name, index);
            return leaseAt(name, index, null).thenCompose(this::release);
        });
    }

    /** The lease of the entry at {@code index} in {@code name}'s queue, for a holder that kept only the index. */
    CompletableFuture<QueueLease> leaseAt(String name, long index, Duration duration) {
        return checked(() -> {
            String queue = listing.queuePrefix(name);
            requireIndex(name, index);
            return listing.view(queue).thenApply(v -> {
                Item entry = entryAt(name, v, index);
                if (entry == null) {
                    throw new LeaseLostException(name, index, head(name, v));
                }
                return new QueueLease(name, LockHolder.ownerOf(entry), entry.key(), entry.createdIndex(), QueueListing.tokenOf(entry),
                        entry.index(), Instant.ofEpochMilli(entry.expiresAt()), duration);
            });
        });
    }

    /**
     * The entry at {@code index}. One log entry can write several (group commit puts a holder's renewal
     * and another client's join in one entry), and an index alone cannot tell them apart: then the one
     * this client's owner wrote, and if that is not exactly one, a refusal rather than a guess, which could
     * release or renew another holder's entry.
     */
    private Item entryAt(String name, QueueListing.View v, long index) {
        List<Item> at = v.entries().stream().filter(e -> e.index() == index).toList();
        if (at.size() <= 1) {
            return at.isEmpty() ? null : at.get(0);
        }
        List<Item> mine = at.stream().filter(e -> keeper.options().owner().equals(LockHolder.ownerOf(e))).toList();
        if (mine.size() != 1) {
            throw new InvalidRequestException("index " + index + " names " + at.size() + " entries of " + name
                    + "'s queue (one log entry wrote them) and " + mine.size() + " of them are owner '" + keeper.options().owner()
                    + "''s: give the lease itself, or act as the owner that took it", null);
        }
        return mine.get(0);
    }

    /** Fails with the {@link LeaseLostException} a refused renew or release of {@code name} at {@code index} owes. */
    private <T> CompletableFuture<T> lostLease(String name, long index, Item entryNow) {
        if (entryNow != null) {
            return CompletableFuture.failedFuture(new LeaseLostException(name, index, QueueListing.holderOf(name, entryNow)));
        }
        // The entry is gone: name whoever heads the queue now, if a listing says.
        return listing.view(listing.queuePrefix(name)).handle((v, error) -> error == null ? head(name, v) : null)
                .thenCompose(head -> CompletableFuture.failedFuture(new LeaseLostException(name, index, head)));
    }

    private LockHolder head(String name, QueueListing.View v) {
        return v.entries().stream().filter(e -> !seen.expired(e)).findFirst().map(e -> QueueListing.holderOf(name, e)).orElse(null);
    }

    /** A waiting entry's value. */
    static Map<String, Object> waiting(String owner) {
        return Map.of("owner", owner);
    }

    /** A holding entry's value: at the turn write (token 0: the write's own index will be it), then with its token. */
    static Map<String, Object> holding(String owner, long token) {
        Map<String, Object> value = new LinkedHashMap<>(); // fields in this order, for people reading the item
        value.put("owner", owner);
        value.put("holding", true);
        if (token > 0) {
            value.put("token", token);
        }
        return value;
    }

    private void requireLease(QueueLease lease) {
        if (lease == null) {
            throw invalid("no lease given");
        }
        String queue = listing.queuePrefix(lease.name());
        requireIndex(lease.name(), lease.currentIndex());
        if (lease.key() == null || !QueueListing.isEntryKey(queue, lease.key())) {
            throw invalid("the lease on " + kind + " '" + abbreviate(lease.name()) + "' names no entry of its queue: "
                    + lease.key());
        }
        if (lease.owner() == null || lease.owner().isEmpty()) {
            throw invalid("the lease on " + kind + " '" + abbreviate(lease.name()) + "' names no owner");
        }
    }

    private void requireIndex(String name, long index) {
        LeaseKeeper.requireIndex(kind, name, index);
    }
}
