package io.ratchet.node.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.ratchet.statemachine.ApplyListener;
import io.ratchet.statemachine.RatchetStateMachine;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.ratis.server.RaftServer;

/**
 * One node's metrics, rendered as Prometheus text for {@code GET /metrics}: what its state machine
 * applies ({@link ApplyMetrics}), how long its front end takes to answer a write, its Raft state, its
 * store and snapshot, a few of Ratis' own metrics, and the JVM's. Each node has a registry of its own,
 * never Micrometer's global one, so that nodes sharing a JVM (the tests' clusters) keep their series
 * apart; every series carries the node's id as tag {@code node}.
 *
 * <p>Made before the Ratis server (its apply listener and round timer go into the state machine and the
 * front end), then bound to the running server with {@link #bindServer}.
 */
public final class NodeMetrics implements AutoCloseable {
    /**
     * The media type of {@link #scrape()}: Prometheus' text format 0.0.4, which every Prometheus version
     * reads (the registry picks its writer by this type).
     */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    /** Bucket bounds for a write's round: a commit on a majority takes milliseconds, a failover seconds. */
    private static final Duration[] ROUND_BUCKETS = {Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5),
            Duration.ofMillis(10), Duration.ofMillis(20), Duration.ofMillis(50), Duration.ofMillis(100),
            Duration.ofMillis(200), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2),
            Duration.ofSeconds(5)};

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final ApplyMetrics applies;
    private final Timer rounds;
    private final Counter refusedBeforeLog;
    private final JvmGcMetrics gc = new JvmGcMetrics();
    /** Kept: function counters hold the object they read weakly. */
    private RatisMetrics ratis;

    public NodeMetrics(String nodeId) {
        registry.config().commonTags("node", nodeId);
        applies = new ApplyMetrics(registry);
        rounds = Timer.builder("ratchet.raft.round")
                .description("from a write reaching this node's front end, as leader, to its results")
                .serviceLevelObjectives(ROUND_BUCKETS).register(registry);
        refusedBeforeLog = Counter.builder("ratchet.conditions.refused.before.log")
                .description("conditional writes this node, as leader, refused without a log entry: each named an index"
                        + " already replaced, so its condition could never hold again (answered with the item as a"
                        + " linearizable read finds it)")
                .register(registry);
        new JvmMemoryMetrics().bindTo(registry);
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
    }

    /** For the state machine: counts and times every entry applied. */
    public ApplyListener applyListener() {
        return applies;
    }

    /** For the front end: writes it refuses for the quota without putting them in the log. */
    public Counter overQuota() {
        return applies.overQuota();
    }

    /** For the front end: conditional writes it refuses without a log entry, their index replaced already. */
    public Counter refusedBeforeLog() {
        return refusedBeforeLog;
    }

    /** For the front end: one record per write answered with results. */
    public Timer rounds() {
        return rounds;
    }

    /**
     * Binds the series read from the running server at each scrape.
     *
     * @param pendingWatches watches the node's front end holds
     */
    public void bindServer(RaftServer.Division division, RatchetStateMachine stateMachine, IntSupplier pendingWatches) {
        new RaftMetrics(() -> RaftState.of(division)).bindTo(registry);
        new StoreMetrics(stateMachine, pendingWatches).bindTo(registry);
        ratis = new RatisMetrics(division.getMemberId().toString());
        ratis.bindTo(registry);
    }

    /**
     * On a cluster of several Raft groups, each group's own series, tagged {@code group}: whether this node
     * leads it ({@code ratchet_group_leader}), its commit and applied indexes, and its store's bytes
     * against the group's share of the quota. The untagged series ({@link #bindServer}) are group 0's.
     */
    public void bindGroups(List<RaftServer.Division> divisions) {
        for (int g = 0; g < divisions.size(); g++) {
            RaftServer.Division d = divisions.get(g);
            RatchetStateMachine machine = (RatchetStateMachine) d.getStateMachine();
            String group = Integer.toString(g);
            Gauge.builder("ratchet.group.leader", () -> RaftState.leads(d) ? 1 : 0).tag("group", group)
                    .description("1 while this node leads the group").register(registry);
            Gauge.builder("ratchet.group.commit.index", () -> d.getRaftLog().getLastCommittedIndex()).tag("group", group)
                    .description("the group's last log index this node knows is committed").register(registry);
            Gauge.builder("ratchet.group.applied.index", () -> d.getInfo().getLastAppliedIndex()).tag("group", group)
                    .description("the group's last log index this node applied").register(registry);
            Gauge.builder("ratchet.group.storage.used", () -> machine.quota().used()).tag("group", group)
                    .baseUnit(BaseUnits.BYTES).description("what the group's state counts against its share of the quota")
                    .register(registry);
            Gauge.builder("ratchet.group.storage.quota", () -> machine.quota().quota()).tag("group", group)
                    .baseUnit(BaseUnits.BYTES).description("the group's share of the storage quota").register(registry);
        }
    }

    /**
     * Binds {@code ratchet_tls_certificate_not_after_seconds}: when the certificate the node shows now
     * stops being valid, in seconds since the epoch, read at each scrape, so a renewal shows at once. An
     * alert on it ({@code ... - time() < 14 * 86400}) warns before the node's peers and clients refuse it.
     */
    public void bindCertificate(Supplier<X509Certificate> inUse) {
        // The supplier form, which the gauge holds strongly: given an object to read, it holds that weakly,
        // and a method reference that nothing else holds read NaN after a collection (a test caught it).
        Gauge.builder("ratchet.tls.certificate.not.after", () -> inUse.get().getNotAfter().getTime() / 1000.0)
                .description("when the TLS certificate this node shows stops being valid (seconds since the epoch)")
                .baseUnit("seconds")
                .register(registry);
    }

    /**
     * Binds {@code ratchet_clock_wall_ahead_seconds}, how far this node's wall clock is from the clock it
     * stamps entries with (positive: ahead), and {@code ratchet_clock_steps}, the steps of the wall clock
     * seen since the start: an alert on the first ({@code abs(...) > 1}) says that a node's clock jumped and
     * that its stamps are still catching up (see {@link io.ratchet.node.StampClock}).
     */
    public void bindClock(LongSupplier wallAheadMillis, LongSupplier steps) {
        Gauge.builder("ratchet.clock.wall.ahead", () -> wallAheadMillis.getAsLong() / 1000.0)
                .description("how far the wall clock is ahead of the clock this node stamps entries with (negative: behind)")
                .baseUnit("seconds")
                .register(registry);
        Gauge.builder("ratchet.clock.steps", steps::getAsLong)
                .description("steps of the wall clock this node has seen since it started")
                .register(registry);
    }

    /**
     * Binds {@code ratchet_leader_stalled_log_handovers}: how often this node, leading, started handing
     * leadership away (a transfer Ratis may still refuse) because its own log could not be flushed (its disk stalled; any rise says its disk is slow);
     * {@code ratchet_node_stalled_share}: the share of the last second this process waited for CPU
     * beyond when it was due to run; and {@code ratchet_leader_slow_handovers}: how often it started
     * handing leadership away because it was starved of CPU while a voter was not.
     */
    public void bindLeaderHandOvers(LongSupplier stalledLog, DoubleSupplier stalledShare, LongSupplier slow) {
        Gauge.builder("ratchet.leader.stalled.log.handovers", stalledLog::getAsLong)
                .description("leadership hand-overs because this node's own Raft log stalled (its disk)")
                .register(registry);
        Gauge.builder("ratchet.node.stalled.share", stalledShare::getAsDouble)
                .description("share of the last second this node waited for CPU beyond when it was due to run")
                .register(registry);
        Gauge.builder("ratchet.leader.slow.handovers", slow::getAsLong)
                .description("leadership hand-overs because this node was starved of CPU and a voter was not")
                .register(registry);
    }

    /** Every series in Prometheus' text format ({@link #CONTENT_TYPE}). */
    public String scrape() {
        return registry.scrape(CONTENT_TYPE);
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }
}
