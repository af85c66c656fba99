package io.ratchet.node;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.statemachine.RatchetStateMachine;
import io.ratchet.statemachine.TxnWork;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finishes the transactions across groups whose coordinator went away (see docs/DESIGN.md, "Transactions
 * across groups"). Every interval, for each group this node leads, it asks the group's state what is due
 * ({@link RatchetStateMachine#transactionWork}) and proposes it there:
 * <ul>
 *   <li>a pending record whose lease has run out is aborted ({@code EXPIRE}; apply checks the lease again
 *       against cluster time, so a commit that lands first wins);</li>
 *   <li>an intent older than {@link #SETTLE_AFTER} whose record is another group's is settled as that record
 *       says, read linearizably through this node (committed: commit; aborted or forgotten: abort; pending:
 *       wait);</li>
 *   <li>a decided record older than {@link #FORGET_AFTER} is forgotten once no group holds its intents: the
 *       usual end of every transaction, many in one entry (the coordinator does not spend an entry on it).</li>
 * </ul>
 * Only the leader proposes, and each step is idempotent, so a recovery racing the coordinator, or another
 * node's after a leader change, changes nothing twice. One thread serves every group.
 */
final class TransactionRecovery implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionRecovery.class);
    static final Duration INTERVAL = Duration.ofMillis(Long.getLong("ratchet.txn.recoveryIntervalMillis", 1_000));
    /** How old an intent is before its primary is asked: its coordinator normally settles it in a round or two. */
    static final Duration SETTLE_AFTER = Duration.ofSeconds(1);
    /** How long a decided record stays before it is forgotten: its coordinator settles the other groups meanwhile. */
    static final Duration FORGET_AFTER = Duration.ofSeconds(2);
    private static final long STEP_TIMEOUT_SECONDS = 10;

    private final RaftServer server;
    private final List<RaftGroupId> groupIds;
    private final List<LocalSubmitter> local = new ArrayList<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("ratchet-txn-recovery"));

    TransactionRecovery(RaftServer server, List<RaftGroupId> groupIds) {
        this.server = server;
        this.groupIds = List.copyOf(groupIds);
        groupIds.forEach(id -> local.add(new LocalSubmitter(id)));
        timer.scheduleWithFixedDelay(this::round, INTERVAL.toMillis(), INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void round() {
        for (int g = 0; g < groupIds.size(); g++) {
            try {
                RaftServer.Division division = server.getDivision(groupIds.get(g));
                if (!division.getInfo().isLeader() || !division.getInfo().isLeaderReady()) {
                    continue;
                }
                RatchetStateMachine machine = (RatchetStateMachine) division.getStateMachine();
                List<TxnWork> forgets = new ArrayList<>();
                for (TxnWork work : machine.transactionWork(machine.stampNow(), SETTLE_AFTER.toMillis(), FORGET_AFTER.toMillis())) {
                    if (work.kind() == TxnWork.Kind.FORGET) {
                        forgets.add(work);
                    } else {
                        recover(g, work);
                    }
                }
                forget(g, forgets);
            } catch (Exception e) {
                // Leadership moves, servers stop: the next round, here or on the new leader, tries again.
                LOG.debug("transaction recovery round of group {} failed", g, e);
            }
        }
    }

    /**
     * Forgets the decided records of {@code forgets} that no other group holds intents of: each other group
     * is asked once about all of them, and the forgets go in one entry (in requests of at most
     * {@link Limits#MAX_COMMANDS_PER_REQUEST}). The usual end of every transaction across groups.
     */
    private void forget(int group, List<TxnWork> forgets) throws Exception {
        if (forgets.isEmpty()) {
            return;
        }
        Set<String> held = new HashSet<>();
        Map<Integer, List<String>> asked = new HashMap<>();
        for (TxnWork work : forgets) {
            for (int other : work.groups()) {
                if (other != group) {
                    asked.computeIfAbsent(other, g -> new ArrayList<>()).add(work.txn());
                }
            }
        }
        for (Map.Entry<Integer, List<String>> e : asked.entrySet()) {
            for (Result.TxnState state : status(e.getKey(), e.getValue())) {
                if (state.intents() > 0) {
                    held.add(state.txn()); // that group's leader settles them first
                }
            }
        }
        List<Command> steps = forgets.stream().filter(w -> !held.contains(w.txn()))
                .map(w -> (Command) new Command.Settle(w.txn(), Command.Settle.Step.FORGET)).toList();
        for (int from = 0; from < steps.size(); from += Limits.MAX_COMMANDS_PER_REQUEST) {
            List<Command> part = steps.subList(from, Math.min(steps.size(), from + Limits.MAX_COMMANDS_PER_REQUEST));
            local.get(group).submit(server, Codec.encodeRequests(List.of(Request.of(part))), RaftClientRequest.writeRequestType())
                    .get(STEP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }
    }

    private void recover(int group, TxnWork work) throws Exception {
        Command.Settle.Step step = switch (work.kind()) {
            case EXPIRE -> Command.Settle.Step.EXPIRE;
            case FORGET -> throw new IllegalArgumentException("forgets are batched: " + work);
            case ASK_PRIMARY -> switch (status(work.primary(), List.of(work.txn())).get(0).record()) {
                case COMMITTED -> Command.Settle.Step.COMMIT;
                // Forgotten: the record goes only once no group holds intents of it, and the coordinator
                // prepares others only after the primary, so an intent it never saw is of an aborted attempt.
                case ABORTED, NONE -> Command.Settle.Step.ABORT;
                case PENDING -> null;
            };
        };
        if (step == null) {
            return;
        }
        LOG.info("transaction {}: {} in group {} (recovery)", work.txn(), step.name().toLowerCase(java.util.Locale.ROOT), group);
        local.get(group).submit(server, Codec.encodeRequests(List.of(Request.of(List.of(new Command.Settle(work.txn(), step))))),
                RaftClientRequest.writeRequestType()).get(STEP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    /** Transactions as group {@code group} sees them, read linearizably through this node (in parts, if many). */
    private List<Result.TxnState> status(int group, List<String> txns) throws Exception {
        List<Result.TxnState> states = new ArrayList<>(txns.size());
        for (int from = 0; from < txns.size(); from += Query.TxnStatus.MAX_TXNS) {
            byte[] answer = local.get(group).submit(server, Codec.encodeQuery(new Query.TxnStatus(
                            txns.subList(from, Math.min(txns.size(), from + Query.TxnStatus.MAX_TXNS)))),
                    RaftClientRequest.readRequestType()).get(STEP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            Codec.decodeResults(answer).forEach(r -> states.add((Result.TxnState) r));
        }
        return states;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
