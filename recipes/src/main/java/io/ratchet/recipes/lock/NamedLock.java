package io.ratchet.recipes.lock;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/** A {@link Lock} whose calls are a lock kind's calls with the name filled in. */
final class NamedLock<G extends Grant> implements Lock<G> {
    private final String name;
    private final LockKind<G> kind;
    private final Function<Duration, CompletableFuture<Optional<G>>> tryAcquire;
    private final BiFunction<Duration, Duration, CompletableFuture<Optional<G>>> acquire;
    private final Supplier<CompletableFuture<List<LockHolder>>> holders;

    /** Lock {@code name} of {@code kind}: its acquires and holders as given, its renewals and releases the kind's. */
    NamedLock(String name, LockKind<G> kind, Function<Duration, CompletableFuture<Optional<G>>> tryAcquire,
              BiFunction<Duration, Duration, CompletableFuture<Optional<G>>> acquire,
              Supplier<CompletableFuture<List<LockHolder>>> holders) {
        this.name = name;
        this.kind = kind;
        this.tryAcquire = tryAcquire;
        this.acquire = acquire;
        this.holders = holders;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String owner() {
        return kind.owner();
    }

    @Override
    public CompletableFuture<Optional<G>> tryAcquireAsync(Duration lease) {
        return tryAcquire.apply(lease);
    }

    @Override
    public CompletableFuture<Optional<G>> acquireAsync(Duration lease, Duration waitTimeout) {
        return acquire.apply(lease, waitTimeout);
    }

    @Override
    public CompletableFuture<G> renewAsync(G grant) {
        return kind.renewAsync(grant);
    }

    @Override
    public CompletableFuture<Void> releaseAsync(G grant) {
        return kind.releaseAsync(grant);
    }

    @Override
    public CompletableFuture<Void> releaseAsync(long index) {
        return kind.releaseAsync(name, index);
    }

    @Override
    public CompletableFuture<List<LockHolder>> holdersAsync() {
        return holders.get();
    }

    @Override
    public String toString() {
        return "Lock[" + name + ", owner=" + owner() + "]";
    }
}
