package io.ratchet.chaos.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.checker.Checker;
import io.ratchet.chaos.checker.ListAppendChecker;
import io.ratchet.chaos.history.History;
import io.ratchet.chaos.workload.AppendKeys.Planned;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.TransactionResult;
import io.ratchet.client.UnknownOutcomeException;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.Item;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Keys;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * Transactions over keys that hold JSON lists, checked as Elle checks them ({@link ListAppendChecker}).
 * A transaction names one to four keys and reads each or appends to it a value no other append carries.
 * It reads every key it names with one {@code getAll} (several groups: read until two reads agree), then
 * commits one cluster transaction: a {@link Command.Check} at the index read for each key it only read, and
 * for each append a put of the list read plus the value, at the index read. So its reads are validated at
 * commit with its writes, and the transaction, not the read before it, is the unit the history records
 * (from the read's invocation to the commit's answer). A transaction that only reads is the
 * {@code getAll} alone. An append is recorded as a read of the list it extends, then the append: the
 * put's condition makes that read part of the transaction too.
 *
 * <p>Keys spread over the groups by hash, and a third of the transactions use only keys of one hash tag, so
 * single-group transactions run beside ones across groups ({@link AppendKeys}). With several groups, a
 * share of the transactions across groups is abandoned by its coordinator half way, as a process killed
 * mid-commit would leave it: after the primary's prepare, after every prepare, after the commit, or after
 * the commit and some of the settles. They are recorded as unknown outcomes; the cluster must finish
 * each whole or not at all, which the final reads show.
 */
public final class AppendWorkload implements Workload {
    public static final String PREFIX = ListAppendChecker.WORKLOAD + "/";
    /** Keys a final read asks for at once: well under the cluster's limit for one getAll. */
    private static final int FINAL_READ_KEYS = 128;
    private static final long ABANDONED_LEASE_MILLIS = 5_000;

    private final AppendKeys keys = new AppendKeys(PREFIX);
    private final int groups;
    private final double abandonShare;
    private final Function<RatchetClient, AppendClient> connect;
    private final Duration checkBudget;

    /**
     * @param groups       the cluster's Raft groups, which the history records per transaction
     * @param abandonShare the share of transactions across groups whose coordinator goes away half way
     * @param connect      the client the transactions go through: {@link AppendClient#of}, or a broken one
     * @param checkBudget  the most the checker's cycle search may take
     */
    public AppendWorkload(int groups, double abandonShare, Function<RatchetClient, AppendClient> connect, Duration checkBudget) {
        if (abandonShare < 0 || abandonShare > 1) {
            throw new IllegalArgumentException("the share of abandoned transactions is between 0 and 1, not " + abandonShare);
        }
        this.groups = groups;
        this.abandonShare = abandonShare;
        this.connect = connect;
        this.checkBudget = checkBudget;
    }

    @Override
    public String name() {
        return ListAppendChecker.WORKLOAD;
    }

    @Override
    public Worker newWorker() {
        return process -> {
            Random random = process.random();
            AppendClient client = connect.apply(process.client());
            List<Planned> plan = keys.plan(random);
            List<String> named = plan.stream().map(Planned::key).toList();
            ObjectNode input = input(plan);
            if (plan.stream().noneMatch(Planned::appends)) {
                process.read(ListAppendChecker.TXN, null, input, () -> lists(client.getAll(named)),
                        read -> output(plan, new Done(true, read, List.of())));
                return;
            }
            boolean abandon = groupsOf(named).size() > 1 && random.nextDouble() < abandonShare;
            int stage = random.nextInt(Stage.values().length);
            process.write(ListAppendChecker.TXN, null, input,
                    () -> abandon ? abandon(client, plan, Stage.values()[stage]) : commit(client, plan),
                    done -> output(plan, done));
        };
    }

    /** What a transaction came to: whether it committed, the lists it read, the keys whose condition failed. */
    private record Done(boolean committed, Map<String, Read> read, List<String> conflicts) {
    }

    /** A key as read: its list (empty when absent) and its index (0 when absent). */
    private record Read(List<Long> list, long index) {
    }

    private static Map<String, Read> lists(List<Item> items) {
        Map<String, Read> read = new HashMap<>();
        for (Item item : items) {
            List<Long> list = new ArrayList<>();
            Json.parse(item.value()).forEach(v -> list.add(v.asLong()));
            read.put(Keys.normalize(item.key()), new Read(List.copyOf(list), item.index()));
        }
        return read;
    }

    private static Read of(Map<String, Read> read, String key) {
        return read.getOrDefault(Keys.normalize(key), new Read(List.of(), 0));
    }

    /** The transaction's operations, in plan order: a check for each key only read, a put for each append. */
    private static List<Command.Op> ops(List<Planned> plan, Map<String, Read> read) {
        List<Command.Op> ops = new ArrayList<>();
        for (Planned p : plan) {
            Read r = of(read, p.key());
            if (p.appends()) {
                List<Long> list = new ArrayList<>(r.list());
                list.add(p.append());
                ops.add(new Command.Put(p.key(), Json.write(list), r.index(), null));
            } else {
                ops.add(new Command.Check(p.key(), r.index()));
            }
        }
        return ops;
    }

    private static Done commit(AppendClient client, List<Planned> plan) {
        Map<String, Read> read = lists(client.getAll(plan.stream().map(Planned::key).toList()));
        TransactionResult result = client.transaction(ops(plan, read));
        return new Done(result.successful(), read, result.conflicts().stream().map(Result.Conflict::key).toList());
    }

    /** Where an abandoned transaction's coordinator stops. */
    private enum Stage {
        /** The primary holds its keys and the record, pending; no other group was asked. */
        PRIMARY_PREPARED,
        /** Every group holds its keys; nothing decided. */
        PREPARED,
        /** Committed in the primary; no other group settled. */
        COMMITTED,
        /** Committed, and every other group but one settled. */
        PARTLY_SETTLED
    }

    /**
     * The transaction as the client's coordinator runs it across groups (the primary is its first
     * operation's group), cut short at {@code stage}. Answers only when the primary's prepare held
     * nothing (a conflict, or a key held by another transaction): then nothing applied. Otherwise it
     * throws {@link UnknownOutcomeException}: whether the transaction applies is the cluster's to decide.
     */
    private Done abandon(AppendClient client, List<Planned> plan, Stage stage) {
        Map<String, Read> read = lists(client.getAll(plan.stream().map(Planned::key).toList()));
        Map<Integer, List<Command.Op>> byGroup = new LinkedHashMap<>();
        for (Command.Op op : ops(plan, read)) {
            byGroup.computeIfAbsent(Groups.of(op.key(), groups), g -> new ArrayList<>()).add(op);
        }
        int primary = byGroup.keySet().iterator().next();
        List<Integer> all = List.copyOf(new TreeSet<>(byGroup.keySet()));
        String txn = "abandoned-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
        RatchetClient raw = client.client();
        Result first = send(raw, primary, new Command.Prepare(txn, primary, all, ABANDONED_LEASE_MILLIS, true, byGroup.get(primary)));
        if (!(first instanceof Result.TxnState)) {
            return new Done(false, read, first instanceof Result.Txn t
                    ? t.conflicts().stream().map(Result.Conflict::key).toList() : List.of());
        }
        List<Integer> others = all.stream().filter(g -> g != primary).toList();
        boolean prepared = true;
        for (int g = 0; g < others.size() && stage != Stage.PRIMARY_PREPARED; g++) {
            int group = others.get(g);
            prepared &= send(raw, group, new Command.Prepare(txn, primary, all, ABANDONED_LEASE_MILLIS, false,
                    byGroup.get(group))) instanceof Result.TxnState;
        }
        if (prepared && (stage == Stage.COMMITTED || stage == Stage.PARTLY_SETTLED)) {
            send(raw, primary, new Command.Settle(txn, Command.Settle.Step.COMMIT));
            for (int g = 0; g < others.size() - 1 && stage == Stage.PARTLY_SETTLED; g++) {
                send(raw, others.get(g), new Command.Settle(txn, Command.Settle.Step.COMMIT));
            }
        }
        throw new UnknownOutcomeException("transaction " + txn + " abandoned by its coordinator at "
                + stage.name().toLowerCase(Locale.ROOT) + ": the cluster finishes it", null);
    }

    private static Result send(RatchetClient client, int group, Command command) {
        return RatchetClient.await(client.submitAsync(group, Request.of(List.of(command)))).get(0);
    }

    private Set<Integer> groupsOf(List<String> named) {
        Set<Integer> of = new TreeSet<>();
        named.forEach(k -> of.add(Groups.of(k, groups)));
        return of;
    }

    /** {@code {"ops":[["r",k,null],["append",k,v],...],"groups":[g,...]}}. */
    private ObjectNode input(List<Planned> plan) {
        ObjectNode o = History.object();
        ArrayNode ops = o.putArray("ops");
        for (Planned p : plan) {
            ops.addArray().add("r").add(p.key()).addNull();
            if (p.appends()) {
                ops.addArray().add("append").add(p.key()).add(p.append());
            }
        }
        ArrayNode in = o.putArray("groups");
        groupsOf(plan.stream().map(Planned::key).toList()).forEach(in::add);
        return o;
    }

    /** {@code {"committed":b,"ops":[["r",k,[v,...]],["append",k,v],...],"conflicts":[k,...]}}. */
    private static JsonNode output(List<Planned> plan, Done done) {
        ObjectNode o = History.object().put("committed", done.committed());
        ArrayNode ops = o.putArray("ops");
        for (Planned p : plan) {
            ArrayNode list = ops.addArray().add("r").add(p.key()).addArray();
            of(done.read(), p.key()).list().forEach(list::add);
            if (p.appends()) {
                ops.addArray().add("append").add(p.key()).add(p.append());
            }
        }
        if (!done.conflicts().isEmpty()) {
            ArrayNode conflicts = o.putArray("conflicts");
            done.conflicts().forEach(conflicts::add);
        }
        return o;
    }

    /**
     * Every key the workload used, read after the run in read-only transactions of a bounded number of keys:
     * the end state the checker's lost-append check needs. A read that gets no answer is asked again.
     */
    @Override
    public void finalReads(ClientProcess reader) {
        AppendClient client = AppendClient.of(reader.client());
        List<String> all = keys.used();
        for (int i = 0; i < all.size(); i += FINAL_READ_KEYS) {
            List<String> named = all.subList(i, Math.min(all.size(), i + FINAL_READ_KEYS));
            List<Planned> plan = named.stream().map(k -> new Planned(k, null)).toList();
            for (int attempt = 0; attempt < 10; attempt++) {
                if (reader.read(ListAppendChecker.TXN, null, input(plan), () -> lists(client.getAll(named)),
                        read -> output(plan, new Done(true, read, List.of()))).ok()) {
                    break;
                }
                Pause.briefly();
            }
        }
    }

    @Override
    public Checker checker() {
        return new ListAppendChecker(checkBudget);
    }
}
