package io.ratchet.bench;

import io.ratchet.client.RatchetClient;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Runs a workload with a fixed number of closed-loop clients (each a thread that starts its next
 * operation when the last one ends) spread over one or more {@link RatchetClient} instances (one shared
 * instance: one application process's threads; one each: as many processes), first a warm-up whose
 * figures are thrown away, then the measured seconds. Prints a progress line per second to
 * {@code progress}; returns the measured figures.
 */
public final class LoadRunner {
    private final List<RatchetClient> instances;
    private final Workload workload;
    private final int clients;
    private final PrintStream progress;
    private final CpuMeter cpu;

    private final AtomicBoolean stopping = new AtomicBoolean();
    private final AtomicBoolean measuring = new AtomicBoolean();
    private final Recorder latencyMicros = new Recorder(3);
    private final LongAdder commits = new LongAdder();
    private final LongAdder attempts = new LongAdder();
    private final LongAdder exhausted = new LongAdder();
    private final LongAdder errors = new LongAdder();
    /** Reserve clients' last acknowledged key, by key prefix (see {@link Workload#prepare}). */
    private final java.util.Map<String, java.util.BitSet> acknowledged = new java.util.concurrent.ConcurrentHashMap<>();
    /** Commits and errors in every phase, for the progress line. */
    private final LongAdder allCommits = new LongAdder();
    private final LongAdder allErrors = new LongAdder();
    private volatile String lastError;

    public LoadRunner(RatchetClient client, Workload workload, int clients, PrintStream progress) {
        this(List.of(client), workload, clients, progress, new CpuMeter(List.of()));
    }

    /** @param cpu what the CPU per operation is read from (the node processes' when they run on this machine) */
    public LoadRunner(List<RatchetClient> instances, Workload workload, int clients, PrintStream progress, CpuMeter cpu) {
        if (clients < 1) {
            throw new IllegalArgumentException("at least one client is needed, not " + clients);
        }
        if (instances.isEmpty() || instances.size() > clients) {
            throw new IllegalArgumentException("1.." + clients + " client instances, not " + instances.size());
        }
        this.instances = List.copyOf(instances);
        this.workload = workload;
        this.clients = clients;
        this.progress = progress;
        this.cpu = cpu;
    }

    /** Each reserve client's key prefix and the sequence numbers of the keys the cluster acknowledged creating. */
    public java.util.Map<String, java.util.BitSet> acknowledged() {
        java.util.Map<String, java.util.BitSet> copy = new java.util.HashMap<>();
        acknowledged.forEach((prefix, bits) -> {
            synchronized (bits) {
                copy.put(prefix, (java.util.BitSet) bits.clone());
            }
        });
        return copy;
    }

    public BenchReport run(Duration warmup, Duration measured) throws InterruptedException {
        return run(Long.toString(System.currentTimeMillis(), 36), warmup, measured);
    }

    /**
     * As {@link #run(Duration, Duration)}, on the keys under {@code bench/<run>/}: a run of the same name
     * works on the counters and keys an earlier one made (a create-only put of one that exists is refused,
     * and the run goes on), so reads can be measured on a cluster whose storage quota is full.
     */
    public BenchReport run(String run, Duration warmup, Duration measured) throws InterruptedException {
        if (measured.isZero() || measured.isNegative()) {
            throw new IllegalArgumentException("the measured duration must be positive");
        }
        Workload.Clients prepared = workload.prepare(instances, run, clients, stopping::get, acknowledged);
        List<Thread> threads = new ArrayList<>();
        LongAdder[] perClient = new LongAdder[clients];
        for (int n = 0; n < clients; n++) {
            Workload.Operation operation = prepared.client(n);
            LongAdder mine = perClient[n] = new LongAdder();
            Thread t = new Thread(() -> loop(operation, mine), "bench-client-" + n);
            t.setDaemon(true);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        try {
            tick("warm-up", warmup);
            latencyMicros.getIntervalHistogram();
            CpuMeter.Reading cpuBefore = cpu.read();
            measuring.set(true);
            long start = System.nanoTime();
            tick("measure", measured);
            measuring.set(false);
            double seconds = (System.nanoTime() - start) / 1e9;
            CpuMeter.Reading cpuAfter = cpu.read();
            Histogram h = latencyMicros.getIntervalHistogram();
            long committed = commits.sum();
            long most = Arrays.stream(perClient).mapToLong(LongAdder::sum).max().orElse(0);
            long least = Arrays.stream(perClient).mapToLong(LongAdder::sum).min().orElse(0);
            return new BenchReport(workload.label(), clients, instances.size(), seconds, committed / seconds,
                    h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0,
                    committed == 0 ? 0 : (double) attempts.sum() / committed, exhausted.sum(), errors.sum(),
                    least == 0 ? Double.NaN : (double) most / least,
                    CpuMeter.microsPerOperation(cpuBefore.nodes(), cpuAfter.nodes(), committed),
                    CpuMeter.microsPerOperation(cpuBefore.bench(), cpuAfter.bench(), committed));
        } finally {
            stopping.set(true);
            for (Thread t : threads) {
                // An operation ends within the client's operation timeout; the threads are daemons anyway.
                t.join(TimeUnit.SECONDS.toMillis(20));
            }
        }
    }

    private void loop(Workload.Operation operation, LongAdder mine) {
        while (!stopping.get()) {
            long t0 = System.nanoTime();
            Workload.Outcome outcome;
            try {
                outcome = operation.run();
            } catch (RuntimeException e) {
                allErrors.increment();
                lastError = e.toString();
                if (measuring.get()) {
                    errors.increment();
                }
                continue;
            }
            long micros = (System.nanoTime() - t0) / 1000;
            if (outcome.committed()) {
                allCommits.increment();
            }
            if (measuring.get()) {
                attempts.add(outcome.attempts());
                if (outcome.committed()) {
                    commits.increment();
                    mine.increment();
                    latencyMicros.recordValue(micros);
                } else {
                    exhausted.increment();
                }
            }
        }
    }

    /** Waits out one phase, printing a line each second: what a person watching the run wants to see. */
    private void tick(String phase, Duration length) throws InterruptedException {
        long end = System.nanoTime() + length.toNanos();
        long second = 0;
        long lastCommits = allCommits.sum();
        long lastErrors = allErrors.sum();
        while (System.nanoTime() < end) {
            long next = Math.min(end, System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
            TimeUnit.NANOSECONDS.sleep(Math.max(0, next - System.nanoTime()));
            second++;
            long c = allCommits.sum();
            long e = allErrors.sum();
            progress.printf(Locale.ROOT, "bench %s %s %d/%d s: %d commits/s, %d errors%s%n", workload.label(), phase,
                    second, Math.max(1, length.toSeconds()), c - lastCommits, e - lastErrors,
                    e > lastErrors ? " (" + lastError + ")" : "");
            lastCommits = c;
            lastErrors = e;
        }
    }
}
