package io.ratchet.node;

import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.statemachine.RatchetStateMachine;
import io.ratchet.statemachine.TxnWork;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
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
 *   <li>a decided record older than {@link #FORGET_AFTER} is forgotten once no group holds its intents.</li>
 * </ul>
 * Only the leader proposes, and each step is idempotent, so a recovery racing the coordinator, or another
 * node's after a leader change, changes nothing twice. One thread serves every group.
 */
final class TransactionRecovery implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionRecovery.class);
    static final Duration INTERVAL = Duration.ofMillis(Long.getLong("ratchet.txn.recoveryIntervalMillis", 1_000));
    /** How old an intent is before its primary is asked: its coordinator normally settles it in a round or two. */
    static final Duration SETTLE_AFTER = Duration.ofSeconds(1);
    /** How long a decided record stays for its coordinator to settle and forget it itself. */
    static final Duration FORGET_AFTER = Duration.ofSeconds(5);
    private static final long STEP_TIMEOUT_SECONDS = 10;

    private final RaftServer server;
    private final List<RaftGroupId> groupIds;
    private final List<LocalSubmitter> local = new ArrayList<>();
    private final LongSupplier clock;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("ratchet-txn-recovery"));

    TransactionRecovery(RaftServer server, List<RaftGroupId> groupIds, LongSupplier clock) {
        this.server = server;
        this.groupIds = List.copyOf(groupIds);
        this.clock = clock;
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
                for (TxnWork work : machine.transactionWork(clock.getAsLong(), SETTLE_AFTER.toMillis(), FORGET_AFTER.toMillis())) {
                    recover(g, work);
                }
            } catch (Exception e) {
                // Leadership moves, servers stop: the next round, here or on the new leader, tries again.
                LOG.debug("transaction recovery round of group {} failed", g, e);
            }
        }
    }

    private void recover(int group, TxnWork work) throws Exception {
        Command.Settle.Step step = switch (work.kind()) {
            case EXPIRE -> Command.Settle.Step.EXPIRE;
            case FORGET -> {
                for (int other : work.groups()) {
                    if (other != group && status(other, work.txn()).intents() > 0) {
                        yield null; // that group's leader settles them first
                    }
                }
                yield Command.Settle.Step.FORGET;
            }
            case ASK_PRIMARY -> switch (status(work.primary(), work.txn()).record()) {
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

    /** The transaction as group {@code group} sees it, read linearizably through this node. */
    private Result.TxnState status(int group, String txn) throws Exception {
        byte[] answer = local.get(group).submit(server, Codec.encodeQuery(new Query.TxnStatus(txn)),
                RaftClientRequest.readRequestType()).get(STEP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        return (Result.TxnState) Codec.decodeResults(answer).get(0);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
