package io.ratchet.shedlock;

import io.ratchet.recipes.lock.Lease;
import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * One {@code lock} call's locks (the first, then each extension) as the thread that called {@code lock}
 * sees them: what {@link RatchetLockProvider#currentLease()} reads. A thread's chains form a stack, innermost
 * last, as ShedLock's {@code LockExtender} keeps nested locks.
 */
final class LeaseChain {
    private static final ThreadLocal<Deque<LeaseChain>> CHAINS = new ThreadLocal<>();

    /** The calling thread's stack; concurrent because an unlock may come from another thread. */
    private final Deque<LeaseChain> stack;
    /** Volatile: a keep-alive extends from its scheduler's thread while the task reads it on its own. */
    private volatile Lease lease;
    private volatile boolean lost;

    private LeaseChain(Deque<LeaseChain> stack, Lease lease) {
        this.stack = stack;
        this.lease = lease;
    }

    /** A new chain for {@code lease}, innermost on the calling thread. */
    static LeaseChain start(Lease lease) {
        Deque<LeaseChain> stack = CHAINS.get();
        if (stack == null) {
            stack = new ConcurrentLinkedDeque<>();
            CHAINS.set(stack);
        }
        LeaseChain chain = new LeaseChain(stack, lease);
        stack.addLast(chain);
        return chain;
    }

    /** The calling thread's innermost chain, or null. */
    static LeaseChain innermost() {
        Deque<LeaseChain> stack = CHAINS.get();
        return stack == null ? null : stack.peekLast();
    }

    Lease lease() {
        return lease;
    }

    boolean lost() {
        return lost;
    }

    void extendedTo(Lease renewed) {
        lease = renewed;
    }

    /** Kept on the stack until ShedLock unlocks, so that a nested task does not see an outer lock's token meanwhile. */
    void markLost() {
        lost = true;
    }

    void end() {
        stack.removeLastOccurrence(this);
        // Only the owning thread can clear its thread-local; another thread leaves an empty stack for reuse.
        if (stack.isEmpty() && CHAINS.get() == stack) {
            CHAINS.remove();
        }
    }
}
