package io.ratchet.chaos.nemesis;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.chaos.history.History;
import io.ratchet.chaos.history.Op;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;

/**
 * Drives a nemesis on its own thread: a quiet spell, a fault, the fault's spell, the heal, and again,
 * until stopped (a {@linkplain Fault#lasts() lasting} change has no spell and no heal). Both spells vary
 * at random between half and one and a half times their setting. Every fault and heal goes into the
 * history (workload {@code nemesis}), and into a timeline for the report. Two loops may run at once, each
 * with a process name of its own.
 */
public final class NemesisLoop {
    /** The workload of every nemesis line, and the process of a run's only loop. */
    public static final String PROCESS = "nemesis";

    private final Nemesis nemesis;
    private final String process;
    private final History history;
    private final Duration quiet;
    private final Duration faultLength;
    private final Random random;
    private final List<Event> timeline = new ArrayList<>();
    private final Map<String, Integer> kinds = new TreeMap<>();
    private final Thread thread;
    private volatile boolean stopping;
    private int faults;
    private int refused;

    /** A line of the timeline, at {@code time} nanoseconds into the history. */
    public record Event(long time, String text) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%7.2f s  %s", time / 1e9, text);
        }
    }

    public NemesisLoop(Nemesis nemesis, History history, Duration quiet, Duration faultLength, Random random) {
        this(nemesis, PROCESS, history, quiet, faultLength, random);
    }

    /** @param process the history's process for this loop's lines: {@link #PROCESS} unless several loops run */
    public NemesisLoop(Nemesis nemesis, String process, History history, Duration quiet, Duration faultLength, Random random) {
        this.nemesis = nemesis;
        this.process = process;
        this.history = history;
        this.quiet = quiet;
        this.faultLength = faultLength;
        this.random = random;
        this.thread = new Thread(this::run, process);
        thread.setDaemon(true);
    }

    public Nemesis nemesis() {
        return nemesis;
    }

    public void start() {
        thread.start();
    }

    /** Stops after healing the fault in force, if any. */
    public void stop() throws InterruptedException {
        stopAll(List.of(this));
    }

    /** Stops every loop, each after healing its fault in force: all are told first, so none injects again while another heals. */
    public static void stopAll(List<NemesisLoop> loops) throws InterruptedException {
        loops.forEach(l -> l.stopping = true);
        for (NemesisLoop l : loops) {
            l.thread.join();
        }
    }

    private void run() {
        while (spell(quiet)) {
            Op invoke = history.invoke(process, PROCESS, "fault", null, History.object().put("nemesis", nemesis.name()));
            Optional<Fault> fault;
            try {
                fault = nemesis.inject(random);
            } catch (FaultRefused e) {
                refuse(history.fail(invoke, "not done: " + e.getMessage()), "not done: " + e.getMessage());
                continue;
            } catch (IOException | RuntimeException e) {
                note(history.info(invoke, e.getMessage()), "could not inject a fault: " + e.getMessage());
                continue;
            }
            if (fault.isEmpty()) {
                String why = "nothing to act on (no leader known, or its node busy with another fault)";
                note(history.fail(invoke, why), "no fault: " + why);
                continue;
            }
            Op done = history.ok(invoke, History.object().put("kind", fault.get().kind()).put("fault", fault.get().description()));
            count(done, fault.get());
            if (!fault.get().lasts()) {
                spell(faultLength);
                heal(fault.get());
            }
        }
    }

    private void heal(Fault fault) {
        ObjectNode input = History.object().put("fault", fault.description());
        Op invoke = history.invoke(process, PROCESS, "heal", null, input);
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

    private synchronized void count(Op op, Fault fault) {
        faults++;
        kinds.merge(fault.kind(), 1, Integer::sum);
        note(op, fault.description());
    }

    private synchronized void refuse(Op op, String what) {
        refused++;
        note(op, what);
    }

    private synchronized void note(Op op, String what) {
        timeline.add(new Event(op.time(), what));
    }

    public synchronized int faults() {
        return faults;
    }

    /** Faults the cluster refused (nothing changed); not counted in {@link #faults()}. */
    public synchronized int refused() {
        return refused;
    }

    /** Faults injected, by {@link Fault#kind()}. */
    public synchronized Map<String, Integer> kinds() {
        return Map.copyOf(kinds);
    }

    public synchronized List<Event> timeline() {
        return List.copyOf(timeline);
    }

    /** The timelines of several loops as one, in time order. */
    public static List<Event> timeline(List<NemesisLoop> loops) {
        List<Event> all = new ArrayList<>();
        loops.forEach(l -> all.addAll(l.timeline()));
        all.sort(Comparator.comparingLong(Event::time));
        return all;
    }
}
