package io.ratchet.recipes.session;

import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.InvalidRequestException;
import io.ratchet.client.TransactionResult;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Document;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A single-threaded stand-in for a cluster, for testing the session and retry logic without Raft: the
 * compare-exchange conditions of {@code CompareExchangeStore} on index equality (no expiry), one log
 * index per write, idempotency keys remembered forever, and hooks to interleave another writer or to
 * lose an answer. The real semantics are tested against the real store and a real cluster elsewhere.
 */
final class InMemoryCluster implements ClusterAccess {
    private final TreeMap<String, Item> items = new TreeMap<>();
    private final Map<String, Document> documents = new HashMap<>();
    private final Map<String, Object> remembered = new HashMap<>();
    private long lastIndex;

    int reads;
    int transactionsApplied;
    final List<List<Command.Op>> sent = new ArrayList<>();
    /** Runs before every transaction or write is evaluated: another writer getting in first. */
    Runnable beforeWrite = () -> { };
    /** How many of the next writes are applied and then answered with an unknown outcome. */
    int answersToLose;

    @Override
    public Optional<Document> document(String id) {
        reads++;
        return Optional.ofNullable(documents.get(Keys.normalize(id)));
    }

    @Override
    public Optional<Item> item(String key) {
        reads++;
        return Optional.ofNullable(items.get(Keys.normalize(key)));
    }

    @Override
    public TransactionResult transaction(List<Command.Op> ops, String idempotencyKey, Duration retention) {
        sent.add(List.copyOf(ops));
        validate(new Command.Transaction(ops));
        if (idempotencyKey != null && remembered.containsKey(idempotencyKey)) {
            return deliver((TransactionResult) remembered.get(idempotencyKey));
        }
        Runnable hook = beforeWrite;
        beforeWrite = () -> { };
        hook.run();
        beforeWrite = hook;
        List<Result.Conflict> conflicts = new ArrayList<>();
        for (Command.Op op : ops) {
            long actual = indexOf(op.key());
            boolean holds = op instanceof Command.Delete || op instanceof Command.DeleteDocument
                    ? actual != 0 && actual == op.index() : actual == op.index();
            if (!holds) {
                conflicts.add(new Result.Conflict(op.key(), op.index(), actual));
            }
        }
        TransactionResult result;
        if (conflicts.isEmpty()) {
            long index = ++lastIndex;
            ops.forEach(op -> apply(op, index));
            transactionsApplied++;
            result = new TransactionResult(true, index, List.of());
        } else {
            result = new TransactionResult(false, 0, conflicts);
        }
        return answer(idempotencyKey, result);
    }

    @Override
    public CompareExchangeResult write(Command.Op write, String idempotencyKey, Duration retention) {
        validate(write);
        if (idempotencyKey != null && remembered.containsKey(idempotencyKey)) {
            return deliver((CompareExchangeResult) remembered.get(idempotencyKey));
        }
        Runnable hook = beforeWrite;
        beforeWrite = () -> { };
        hook.run();
        beforeWrite = hook;
        Item current = items.get(Keys.normalize(write.key()));
        long actual = current == null ? 0 : current.index();
        if (actual != write.index() || (write instanceof Command.Delete && current == null)) {
            return answer(idempotencyKey, new CompareExchangeResult(false, write.key(), current));
        }
        long index = ++lastIndex;
        apply(write, index);
        return answer(idempotencyKey, new CompareExchangeResult(true, write.key(), items.get(Keys.normalize(write.key()))));
    }

    /** Another writer: stores {@code json} under {@code id} and moves its guard, unconditionally. */
    long putDocument(String id, String json) {
        long index = ++lastIndex;
        apply(new Command.PutDocument(id, json, 0), index);
        return index;
    }

    /** Another writer: puts {@code json} under {@code key}, unconditionally. */
    long putItem(String key, String json) {
        long index = ++lastIndex;
        apply(new Command.Put(key, json, 0, null), index);
        return index;
    }

    Optional<Document> peekDocument(String id) {
        return Optional.ofNullable(documents.get(Keys.normalize(id)));
    }

    Optional<Item> peekItem(String key) {
        return Optional.ofNullable(items.get(Keys.normalize(key)));
    }

    long lastIndex() {
        return lastIndex;
    }

    private <R> R answer(String idempotencyKey, R result) {
        if (idempotencyKey != null) {
            remembered.put(idempotencyKey, result);
        }
        return deliver(result);
    }

    private <R> R deliver(R result) {
        if (answersToLose > 0) {
            answersToLose--;
            throw new UnknownOutcomeException("the answer was lost (test)", null);
        }
        return result;
    }

    private long indexOf(String key) {
        Item item = items.get(Keys.normalize(key));
        return item == null ? 0 : item.index();
    }

    private void apply(Command.Op op, long index) {
        String key = Keys.normalize(op.key());
        Item current = items.get(key);
        long created = current == null ? index : current.createdIndex();
        if (op instanceof Command.Put p) {
            items.put(key, new Item(current == null ? p.key() : current.key(), p.value(), index, created, 0, p.metadata()));
        } else if (op instanceof Command.PutDocument d) {
            documents.put(Keys.normalize(d.id()), new Document(d.id(), d.json(), index));
            items.put(key, new Item(d.key(), Json.write(Map.of("Id", d.id())), index, created, 0, null));
        } else if (op instanceof Command.DeleteDocument d) {
            documents.remove(Keys.normalize(d.id()));
            items.remove(key);
        } else if (op instanceof Command.Delete) {
            items.remove(key);
        }
    }

    private static void validate(Object command) {
        try {
            if (command instanceof Command c) {
                c.validate();
            } else {
                ((Command.Op) command).validate();
            }
        } catch (InvalidCommandException e) {
            throw new InvalidRequestException(e.getMessage(), e);
        }
    }
}
