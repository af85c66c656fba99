package io.ratchet.recipes.lock;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Supplier;

/** A {@link Lock} whose calls are a lock kind's calls with the name filled in. */
final class NamedLock<G extends Grant> implements Lock<G> {
    private final String name;
    private final String owner;
    private final Function<Duration, CompletableFuture<Optional<G>>> tryAcquire;
    private final BiFunction<Duration, Duration, CompletableFuture<Optional<G>>> acquire;
    private final Function<G, CompletableFuture<G>> renew;
    private final Function<G, CompletableFuture<Void>> release;
    private final LongFunction<CompletableFuture<Void>> releaseAt;
    private final Supplier<CompletableFuture<List<LockHolder>>> holders;

    NamedLock(String name, String owner, Function<Duration, CompletableFuture<Optional<G>>> tryAcquire,
              BiFunction<Duration, Duration, CompletableFuture<Optional<G>>> acquire, Function<G, CompletableFuture<G>> renew,
              Function<G, CompletableFuture<Void>> release, LongFunction<CompletableFuture<Void>> releaseAt,
              Supplier<CompletableFuture<List<LockHolder>>> holders) {
        this.name = name;
        this.owner = owner;
        this.tryAcquire = tryAcquire;
        this.acquire = acquire;
        this.renew = renew;
        this.release = release;
        this.releaseAt = releaseAt;
        this.holders = holders;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String owner() {
        return owner;
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
        return renew.apply(grant);
    }

    @Override
    public CompletableFuture<Void> releaseAsync(G grant) {
        return release.apply(grant);
    }

    @Override
    public CompletableFuture<Void> releaseAsync(long index) {
        return releaseAt.apply(index);
    }

    @Override
    public CompletableFuture<List<LockHolder>> holdersAsync() {
        return holders.get();
    }

    @Override
    public String toString() {
        return "Lock[" + name + ", owner=" + owner + "]";
    }
}
