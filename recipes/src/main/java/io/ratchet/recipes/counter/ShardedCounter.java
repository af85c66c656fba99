package io.ratchet.recipes.counter;

import io.ratchet.client.AddResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.NotAnIntegerException;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Limits;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32;

/**
 * A counter kept in {@code shards} items, {@code NAME/0} to {@code NAME/N-1}, each changed only by
 * {@link RatchetClient#add}: how a count that many processes change at once is spread over the cluster's
 * Raft groups, each shard landing in the group its key hashes to.
 *
 * <p>Guarantees. An {@link #add} never conflicts and never retries: it is one write with no condition, to
 * one shard. {@link #sum} reads every shard and adds them up, an absent shard counting 0: the shards in one
 * group are one linearizable read of that group, so on a cluster of one group (or with shard keys that share
 * a hash tag, as {@code counters/{hits}}) the sum is the counter at one moment. Shards in several groups
 * are read from each group at once but not at one moment: the sum then counts every add acknowledged
 * before {@code sum} was called and none begun after it returned, and for a counter whose adds all have
 * one sign it lies between the counter's values at the call's start and end, but it need not be a value
 * the counter ever had.
 *
 * <p>What the caller owes: an add whose answer was lost ({@link io.ratchet.client.UnknownOutcomeException})
 * may have counted; to count it once, add with an idempotency key and send the same add again under it.
 * Such an add goes to the shard its key names (not a random one), so that the resend meets the first.
 * Errors: {@link NotAnIntegerException} when a shard holds something other than an integer (another
 * writer's put), {@link io.ratchet.client.AddOverflowException} when a shard would pass the signed
 * 64-bit range, {@link ArithmeticException} when the shards' sum does.
 */
public final class ShardedCounter {
    /** The most shards a counter has: one {@code getAll} reads them all. */
    public static final int MAX_SHARDS = Limits.MAX_GET_ALL_KEYS;

    private final RatchetClient client;
    private final String name;
    private final List<String> keys;

    /**
     * A counter named {@code name} over {@code shards} keys. Every process that counts with it must give the
     * same name and number of shards; the keys are plain items that {@code get} and {@code list} show.
     */
    public ShardedCounter(RatchetClient client, String name, int shards) {
        if (shards < 1 || shards > MAX_SHARDS) {
            throw new InvalidRequestException("a sharded counter has 1.." + MAX_SHARDS + " shards, not " + shards, null);
        }
        List<String> all = new ArrayList<>(shards);
        for (int i = 0; i < shards; i++) {
            String key = name + "/" + i;
            try {
                Keys.validateWritable(key);
            } catch (InvalidCommandException e) {
                throw new InvalidRequestException("counter '" + name + "': " + e.getMessage(), e);
            }
            all.add(key);
        }
        this.client = client;
        this.name = name;
        this.keys = List.copyOf(all);
    }

    public String name() {
        return name;
    }

    /** The shards' keys, in shard order. */
    public List<String> keys() {
        return keys;
    }

    /**
     * Adds {@code n} to a shard drawn at random for this call: random rather than one per thread, so that a
     * process with few threads still spreads its adds over every shard (and so every group), and a
     * burst from one thread is not all one key's. Adds commute, so which shard takes one never matters to
     * the sum.
     */
    public CompletableFuture<AddResult> addAsync(long n) {
        return client.addAsync(keys.get(ThreadLocalRandom.current().nextInt(keys.size())), n);
    }

    /**
     * As {@link #addAsync(long)}, counted once however often it is sent under {@code idempotencyKey} within
     * {@code retention}: it goes to the shard the key's hash picks, the same for every resend.
     */
    public CompletableFuture<AddResult> addAsync(long n, String idempotencyKey, Duration retention) {
        if (idempotencyKey == null) {
            return addAsync(n);
        }
        CRC32 hash = new CRC32();
        hash.update(idempotencyKey.getBytes(StandardCharsets.UTF_8));
        int shard = (int) (hash.getValue() % keys.size());
        return client.addAsync(keys.get(shard), n, idempotencyKey, retention);
    }

    public AddResult add(long n) {
        return RatchetClient.await(addAsync(n));
    }

    public AddResult add(long n, String idempotencyKey, Duration retention) {
        return RatchetClient.await(addAsync(n, idempotencyKey, retention));
    }

    /** The shards' sum (see the class's guarantees for which moment it reflects). */
    public CompletableFuture<Long> sumAsync() {
        // One read a group, not the client's agreeing reads across groups: adds that never pause would keep
        // those from agreeing, and a sum needs no single moment to count every acknowledged add.
        int groups = client.groups();
        List<CompletableFuture<List<Item>>> reads = Groups.byGroup(keys, groups).values().stream()
                .map(client::getAllAsync).toList();
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(done -> {
            long sum = 0;
            for (CompletableFuture<List<Item>> read : reads) {
                for (Item shard : read.join()) {
                    Long value = Command.Add.integerOf(shard.value());
                    if (value == null) {
                        throw new NotAnIntegerException(shard.key(), shard);
                    }
                    try {
                        sum = Math.addExact(sum, value);
                    } catch (ArithmeticException e) {
                        throw new ArithmeticException("the shards of counter '" + name + "' sum past the signed 64-bit range");
                    }
                }
            }
            return sum;
        });
    }

    public long sum() {
        return RatchetClient.await(sumAsync());
    }
}
