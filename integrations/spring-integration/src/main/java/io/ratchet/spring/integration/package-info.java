/**
 * Ratchet for Spring Integration: {@link io.ratchet.spring.integration.RatchetLockRegistry}, a
 * {@code LockRegistry} (expirable, renewable) of leased locks with fencing tokens, usable under
 * {@code LockRegistryLeaderInitiator} for leader election; and
 * {@link io.ratchet.spring.integration.RatchetMetadataStore}, a {@code ConcurrentMetadataStore} whose atomic
 * operations are compare-exchanges. Both only translate Spring's contracts onto {@code io.ratchet.recipes.lock.Locks}
 * and the client's compare-exchange; they add no algorithm of their own.
 *
 * <pre>{@code
 * RatchetClient client = RatchetClient.connect("n1:7001,n2:7002,n3:7003");
 * RatchetLockRegistry locks = new RatchetLockRegistry(client, Duration.ofSeconds(10));
 *
 * RatchetLock lock = locks.obtain("orders");          // the Ratchet lock spring/orders
 * if (lock.tryLock(5, TimeUnit.SECONDS)) {
 *     try {
 *         ledger.write(entry, lock.fencingToken());    // the resource refuses tokens lower than it has seen
 *     } finally {
 *         lock.unlock();
 *     }
 * }
 *
 * // Leader election: the heartbeat's re-entrant tryLock renews the lease (keep the heartbeat well under the ttl).
 * LockRegistryLeaderInitiator leader = new LockRegistryLeaderInitiator(locks, candidate);
 *
 * ConcurrentMetadataStore store = new RatchetMetadataStore(client);   // entries under metadata/
 * }</pre>
 */
package io.ratchet.spring.integration;
