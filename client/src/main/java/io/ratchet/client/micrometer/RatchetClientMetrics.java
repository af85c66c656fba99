package io.ratchet.client.micrometer;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.ratchet.client.ClientEvents;
import io.ratchet.client.Metrics;
import io.ratchet.client.RatchetClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * A {@link RatchetClient}'s meters in a Micrometer registry, named and tagged by Micrometer's conventions.
 * Micrometer is an optional dependency of the client: only an application that has it uses this class.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@code ratchet.client.requests}</td><td>timer</td><td>{@code operation}, {@code outcome}</td>
 *       <td>each operation from call to end, retries included; outcome is {@code applied} (a write),
 *       {@code ok} (a read), or the failure's {@link io.ratchet.client.ErrorCode} name, the one the command line
 *       and the HTTP API give it: {@code condition_failed} (a write refused for its index, a normal
 *       answer), {@code cluster_unavailable}, {@code unknown_outcome}, {@code invalid_request}, ...</td></tr>
 *   <tr><td>{@code ratchet.client.resends}</td><td>counter</td><td></td><td>messages sent again (next node, leader named)</td></tr>
 *   <tr><td>{@code ratchet.client.leader.changes}</td><td>counter</td><td></td><td>new leaders the client followed (failovers)</td></tr>
 *   <tr><td>{@code ratchet.client.hedges}</td><td>counter</td><td></td><td>unanswered attempts also sent to another node</td></tr>
 *   <tr><td>{@code ratchet.client.sessions.opened}</td><td>counter</td><td></td><td>client sessions opened</td></tr>
 *   <tr><td>{@code ratchet.client.locks.held}</td><td>gauge</td><td></td><td>locks this client holds now</td></tr>
 *   <tr><td>{@code ratchet.client.lock.wait}</td><td>timer</td><td>{@code kind}, {@code outcome} (acquired, timeout)</td>
 *       <td>from a lock acquire's call to its grant or its giving up</td></tr>
 *   <tr><td>{@code ratchet.client.attempts}, {@code .commits}, {@code .conflicts}, {@code .exhausted}</td>
 *       <td>counters</td><td></td><td>the retry loops' totals ({@link Metrics}): attempts per commit is
 *       attempts over commits</td></tr>
 *   <tr><td>{@code ratchet.client.key.attempts.per.commit}, {@code .conflict.rate}, {@code .exhausted},
 *       {@code .loop.p99}, {@code .discarded}</td><td>gauges</td><td>{@code key}</td>
 *       <td>the {@link Metrics#EXPORTED_KEYS} keys with the highest conflict rate over the window, refreshed
 *       at most once a second: the key tag is bounded, never one series per key written</td></tr>
 * </table>
 *
 * <p>Extra tags given to the constructor (a client name, say) go on every meter.
 */
public final class RatchetClientMetrics implements MeterBinder {
    private final Metrics metrics;
    private final ClientEvents events;
    private final Tags tags;

    public RatchetClientMetrics(RatchetClient client) {
        this(client, Tags.empty());
    }

    public RatchetClientMetrics(RatchetClient client, Iterable<Tag> tags) {
        this(client.metrics(), client.events(), tags);
    }

    /** The meters of {@code metrics} and {@code events} (a client's own, or a test's). */
    public RatchetClientMetrics(Metrics metrics, ClientEvents events, Iterable<Tag> tags) {
        this.metrics = metrics;
        this.events = events;
        this.tags = Tags.of(tags);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        counter(registry, "ratchet.client.resends", "messages sent again: to the next node, or to the leader a node named",
                events, ClientEvents::resent);
        counter(registry, "ratchet.client.leader.changes", "new leaders the client followed", events, ClientEvents::followedLeader);
        counter(registry, "ratchet.client.hedges", "unanswered attempts also sent to another node", events, ClientEvents::hedged);
        counter(registry, "ratchet.client.sessions.opened", "client sessions opened", events, ClientEvents::sessionsOpened);
        Gauge.builder("ratchet.client.locks.held", events, ClientEvents::locksHeld).tags(tags)
                .description("locks this client holds now").register(registry);

        counter(registry, "ratchet.client.attempts", "writes sent by retry loops", metrics, m -> m.totals().attempts());
        counter(registry, "ratchet.client.commits", "writes of retry loops that were applied", metrics, m -> m.totals().commits());
        counter(registry, "ratchet.client.conflicts", "attempts refused because a key had moved", metrics,
                m -> m.totals().conflicts());
        counter(registry, "ratchet.client.exhausted", "retry loops that gave up", metrics, m -> m.totals().exhausted());
        MultiGauge[] hot = {
            MultiGauge.builder("ratchet.client.key.attempts.per.commit").tags(tags).register(registry),
            MultiGauge.builder("ratchet.client.key.conflict.rate").tags(tags).register(registry),
            MultiGauge.builder("ratchet.client.key.exhausted").tags(tags).register(registry),
            MultiGauge.builder("ratchet.client.key.loop.p99").baseUnit("seconds").tags(tags).register(registry),
            MultiGauge.builder("ratchet.client.key.discarded").baseUnit("seconds").tags(tags).register(registry)};
        metrics.onHotKeysChanged(() -> export(metrics, hot));

        events.subscribe(new Timers(registry));
    }

    private <T> void counter(MeterRegistry registry, String name, String description, T source, ToLongFunction<T> count) {
        FunctionCounter.builder(name, source, s -> count.applyAsLong(s)).tags(tags).description(description).register(registry);
    }

    /** Points the hot-key gauges at the current top keys; a key that left the top is unregistered. */
    private static void export(Metrics metrics, MultiGauge[] hot) {
        List<Metrics.WindowStats> top = metrics.topByConflictRate(Metrics.EXPORTED_KEYS);
        hot[0].register(rows(metrics, top, Metrics.WindowStats::attemptsPerCommit), true);
        hot[1].register(rows(metrics, top, Metrics.WindowStats::conflictRate), true);
        hot[2].register(rows(metrics, top, s -> s.exhausted()), true);
        hot[3].register(rows(metrics, top, s -> s.p99() == null ? Double.NaN : s.p99().toNanos() / 1e9), true);
        hot[4].register(rows(metrics, top, s -> s.discarded().toNanos() / 1e9), true);
    }

    /** One row per key; each reads the key's window afresh when the registry asks. */
    private static List<MultiGauge.Row<?>> rows(Metrics metrics, List<Metrics.WindowStats> top,
                                                ToDoubleFunction<Metrics.WindowStats> figure) {
        List<MultiGauge.Row<?>> rows = new ArrayList<>(top.size());
        for (Metrics.WindowStats s : top) {
            rows.add(MultiGauge.Row.of(Tags.of("key", s.key()), metrics, m -> figure.applyAsDouble(m.windowed(s.key()))));
        }
        return rows;
    }

    /** The timers of one registry, made on first use of each tag pair. */
    private final class Timers implements ClientEvents.Listener {
        private final MeterRegistry registry;
        private final Map<String, Timer> byTags = new ConcurrentHashMap<>();

        Timers(MeterRegistry registry) {
            this.registry = registry;
        }

        @Override
        public void operation(String operation, String outcome, long nanos) {
            timer("ratchet.client.requests", "operation", operation, outcome,
                    "operations from call to end, retries included").record(nanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void lockAcquire(String kind, boolean acquired, long waitNanos) {
            timer("ratchet.client.lock.wait", "kind", kind, acquired ? "acquired" : "timeout",
                    "lock acquires from call to grant or giving up").record(waitNanos, TimeUnit.NANOSECONDS);
        }

        private Timer timer(String name, String tag, String value, String outcome, String description) {
            return byTags.computeIfAbsent(name + '|' + value + '|' + outcome, k -> Timer.builder(name)
                    .tags(tags).tag(tag, value).tag("outcome", outcome).description(description).register(registry));
        }
    }
}
