package io.ratchet.node.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.metrics.MetricRegistries;
import org.apache.ratis.metrics.MetricRegistryInfo;
import org.apache.ratis.metrics.RatisMetricRegistry;
import org.apache.ratis.metrics.impl.RatisMetricRegistryImpl;
import org.apache.ratis.server.metrics.LeaderElectionMetrics;
import org.apache.ratis.server.metrics.RaftLogMetricsBase;
import org.apache.ratis.server.metrics.RaftServerMetricsImpl;
import org.apache.ratis.server.metrics.SegmentedRaftLogMetrics;
import org.apache.ratis.thirdparty.com.codahale.metrics.Counting;
import org.apache.ratis.thirdparty.com.codahale.metrics.Metric;
import org.apache.ratis.thirdparty.com.codahale.metrics.Sampling;

/**
 * A few of Ratis' own metrics, exported beside ours: elections, election timeouts, snapshot installs,
 * and the latency of appending to the log and of syncing it to disk.
 *
 * <p>Ratis 3.3 keeps its metrics in registries of its own ({@code ratis-metrics-default}: Dropwizard
 * metrics, relocated into Ratis' thirdparty package), which no Micrometer or Prometheus binder reads. So
 * each series here looks its metric up by Ratis' name at scrape time, in the registries of this node's
 * division (their prefix is its member id, so nodes sharing a JVM in tests stay apart). A Ratis timer
 * keeps no total, only a count and a decaying sample of recent times: it becomes a counter and
 * quantile gauges. A metric Ratis has not created reads as NaN.
 */
final class RatisMetrics implements MeterBinder {
    private static final double[] QUANTILES = {0.5, 0.99};

    private final String member;

    /** @param member this node's division's member id, as Ratis prefixes its registries with it */
    RatisMetrics(String member) {
        this.member = member;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        count(registry, "ratchet.ratis.elections", LeaderElectionMetrics.RATIS_LEADER_ELECTION_METRICS,
                LeaderElectionMetrics.LEADER_ELECTION_COUNT_METRIC, "elections this node stood in, won or lost");
        count(registry, "ratchet.ratis.election.timeouts", LeaderElectionMetrics.RATIS_LEADER_ELECTION_METRICS,
                LeaderElectionMetrics.LEADER_ELECTION_TIMEOUT_COUNT_METRIC,
                "times this node heard no leader within its election timeout");
        count(registry, "ratchet.ratis.snapshot.installs", RaftServerMetricsImpl.RATIS_SERVER_METRICS,
                RaftServerMetricsImpl.RATIS_SERVER_INSTALL_SNAPSHOT_COUNT, "snapshots installed on this node from the leader");
        latency(registry, "ratchet.ratis.log.append", RaftLogMetricsBase.RATIS_LOG_WORKER_METRICS,
                SegmentedRaftLogMetrics.RAFT_LOG_APPEND_ENTRY_LATENCY, "appending an entry to this node's log");
        latency(registry, "ratchet.ratis.log.sync", RaftLogMetricsBase.RATIS_LOG_WORKER_METRICS,
                SegmentedRaftLogMetrics.RAFT_LOG_SYNC_TIME, "syncing this node's log to disk (fsync)");
    }

    private void count(MeterRegistry registry, String name, String component, String metric, String description) {
        // The counter holds this binder weakly; NodeMetrics keeps it.
        FunctionCounter.builder(name, this, m -> m.count(component, metric))
                .description(description + " (Ratis " + component + "." + metric + ")").register(registry);
    }

    private void latency(MeterRegistry registry, String name, String component, String metric, String what) {
        FunctionCounter.builder(name + "s", this, m -> m.count(component, metric))
                .description("times of " + what + " (Ratis " + component + "." + metric + ")").register(registry);
        for (double q : QUANTILES) {
            TimeGauge.builder(name + ".latency", () -> quantileNanos(component, metric, q), TimeUnit.NANOSECONDS)
                    .tag("quantile", Double.toString(q))
                    .description("time of " + what + " over the last minutes (Ratis' decaying sample)")
                    .register(registry);
        }
    }

    private double count(String component, String name) {
        return metric(component, name) instanceof Counting c ? c.getCount() : Double.NaN;
    }

    private double quantileNanos(String component, String name, double q) {
        return metric(component, name) instanceof Sampling s ? s.getSnapshot().getValue(q) : Double.NaN;
    }

    /** Ratis' metric by its registry's component and its own name, or null. */
    private Metric metric(String component, String name) {
        for (RatisMetricRegistry r : MetricRegistries.global().getMetricRegistries()) {
            MetricRegistryInfo info = r.getMetricRegistryInfo();
            if (member.equals(info.getPrefix()) && component.equals(info.getMetricsComponentName())
                    && r instanceof RatisMetricRegistryImpl impl) {
                return impl.get(name);
            }
        }
        return null;
    }
}
