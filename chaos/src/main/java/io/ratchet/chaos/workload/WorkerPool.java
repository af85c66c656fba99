package io.ratchet.chaos.workload;

import io.ratchet.chaos.history.History;
import io.ratchet.client.RatchetClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Runs a workload's client processes, each on its own thread with its own connection, at about
 * {@code rate} operations a second in all, until stopped.
 */
public final class WorkerPool {
    private final Workload workload;
    private final int concurrency;
    private final double rate;
    private final History history;
    private final Supplier<String> ids;
    private final Supplier<RatchetClient> clients;
    private final long seed;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicInteger harnessErrors = new AtomicInteger();
    private volatile boolean stopping;

    /**
     * @param rate    operations per second over all processes (each process waits a random time with mean
     *                {@code concurrency / rate} between operations)
     * @param ids     hands out process ids, unique in the run
     * @param clients opens a connection for one process
     * @param seed    process {@code i} draws its choices from {@code new Random(seed + i)}
     */
    public WorkerPool(Workload workload, int concurrency, double rate, History history, Supplier<String> ids,
                      Supplier<RatchetClient> clients, long seed) {
        this.workload = workload;
        this.concurrency = concurrency;
        this.rate = rate;
        this.history = history;
        this.ids = ids;
        this.clients = clients;
        this.seed = seed;
    }

    public void start() {
        for (int i = 0; i < concurrency; i++) {
            Random random = new Random(seed + i);
            Thread t = new Thread(() -> run(random), workload.name() + "-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
    }

    private void run(Random random) {
        try (RatchetClient client = clients.get()) {
            ClientProcess process = new ClientProcess(history, workload.name(), ids, client, random);
            Worker worker = workload.newWorker();
            while (!stopping) {
                try {
                    worker.step(process);
                } catch (RuntimeException e) {
                    // A bug in the harness, not an outcome: say so, and keep the other processes going.
                    harnessErrors.incrementAndGet();
                    System.err.println("chaos: " + workload.name() + " worker error: " + e);
                    e.printStackTrace();
                }
                pause(random);
            }
            worker.finish(process);
        }
    }

    private void pause(Random random) {
        long mean = (long) (concurrency * 1000 / rate);
        long until = System.currentTimeMillis() + (long) (random.nextDouble() * 2 * mean);
        while (!stopping && System.currentTimeMillis() < until) {
            try {
                Thread.sleep(Math.min(50, Math.max(1, until - System.currentTimeMillis())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Lets every process finish its current operation and its {@link Worker#finish}, waiting up to
     * {@code grace} in all. Returns how many were still running then: their open operations stay open in
     * the history, which the checkers read as unknown outcomes.
     */
    public int stop(Duration grace) throws InterruptedException {
        stopping = true;
        long deadline = System.nanoTime() + grace.toNanos();
        int running = 0;
        for (Thread t : threads) {
            t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            if (t.isAlive()) {
                running++;
            }
        }
        return running;
    }

    /** Unexpected exceptions in the workers' own code. */
    public int harnessErrors() {
        return harnessErrors.get();
    }
}
