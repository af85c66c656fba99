package io.ratchet.chaos.nemesis;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.history.History;
import io.ratchet.chaos.history.Op;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;

/**
 * Drives a nemesis on its own thread: a quiet spell, a fault, the fault's spell, the heal, and again,
 * until stopped. Both spells vary at random between half and one and a half times their setting. Every
 * fault and heal goes into the history as process {@code nemesis}, and into a timeline for the report.
 */
public final class NemesisLoop {
    public static final String PROCESS = "nemesis";

    private final Nemesis nemesis;
    private final History history;
    private final Duration quiet;
    private final Duration faultLength;
    private final Random random;
    private final List<String> timeline = new ArrayList<>();
    private final Thread thread;
    private volatile boolean stopping;
    private int faults;

    public NemesisLoop(Nemesis nemesis, History history, Duration quiet, Duration faultLength, Random random) {
        this.nemesis = nemesis;
        this.history = history;
        this.quiet = quiet;
        this.faultLength = faultLength;
        this.random = random;
        this.thread = new Thread(this::run, "nemesis");
        thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    /** Stops after healing the fault in force, if any. */
    public void stop() throws InterruptedException {
        stopping = true;
        thread.join();
    }

    private void run() {
        while (spell(quiet)) {
            Op invoke = history.invoke(PROCESS, PROCESS, "fault", null, History.object().put("nemesis", nemesis.name()));
            Optional<Fault> fault;
            try {
                fault = nemesis.inject(random);
            } catch (IOException | RuntimeException e) {
                note(history.info(invoke, e.getMessage()), "could not inject a fault: " + e.getMessage());
                continue;
            }
            if (fault.isEmpty()) {
                note(history.fail(invoke, "nothing to act on (no leader known)"), "no fault: nothing to act on (no leader known)");
                continue;
            }
            Op done = history.ok(invoke, History.object().put("kind", fault.get().kind()).put("fault", fault.get().description()));
            count(done, fault.get().description());
            spell(faultLength);
            heal(fault.get());
        }
    }

    private void heal(Fault fault) {
        ObjectNode input = History.object().put("fault", fault.description());
        Op invoke = history.invoke(PROCESS, PROCESS, "heal", null, input);
        try {
            String done = fault.heal();
            note(history.ok(invoke, History.object().put("done", done)), done);
        } catch (IOException | RuntimeException e) {
            note(history.info(invoke, e.getMessage()), "could not heal (" + fault.description() + "): " + e.getMessage());
        }
    }

    /** Waits a random spell around {@code length}; false when stopped meanwhile. */
    private boolean spell(Duration length) {
        long until = System.nanoTime() + (long) (length.toNanos() * (0.5 + random.nextDouble()));
        while (!stopping && System.nanoTime() < until) {
            try {
                Thread.sleep(Math.min(100, Math.max(1, (until - System.nanoTime()) / 1_000_000)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return !stopping;
    }

    private synchronized void count(Op op, String description) {
        faults++;
        note(op, description);
    }

    private synchronized void note(Op op, String what) {
        timeline.add(String.format(Locale.ROOT, "%7.2f s  %s", op.time() / 1e9, what));
    }

    public synchronized int faults() {
        return faults;
    }

    public synchronized List<String> timeline() {
        return List.copyOf(timeline);
    }
}
