package io.ratchet.chaos.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What each running node holds, sampled through a long run (a soak) to show whether anything grows that
 * should not: its heap after a full collection (asked for with {@code jcmd GC.run}, then read with
 * {@code GC.heap_info}), its threads and open files ({@code /proc}), and the disk its storage takes.
 * One JSON line a node a sample in {@code resources.jsonl}; {@link #summary()} compares the first and the
 * last fifth of the run for the report. A paused node is skipped (jcmd would wait for it).
 */
public final class ResourceSampler implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");
    private static final Duration JCMD_TIMEOUT = Duration.ofSeconds(15);

    private final Cluster cluster;
    private final Duration interval;
    private final BufferedWriter out;
    private final long started = System.nanoTime();
    private final List<Sample> samples = new ArrayList<>();
    private final Thread thread;
    private volatile boolean stopping;

    /** One node at one time: heap after GC, threads, open files, storage bytes (-1: could not be read). */
    public record Sample(double seconds, String node, long pid, long heapAfterGc, long threads, long openFiles, long diskBytes) {
    }

    public ResourceSampler(Cluster cluster, Duration interval, Path file) throws IOException {
        this.cluster = cluster;
        this.interval = interval;
        this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
        this.thread = new Thread(this::run, "chaos-resources");
        thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    private void run() {
        while (!stopping) {
            sampleAll();
            long until = System.nanoTime() + interval.toNanos();
            while (!stopping && System.nanoTime() < until) {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private void sampleAll() {
        for (NodeProcess node : cluster.nodes()) {
            if (!node.alive() || node.paused()) {
                continue;
            }
            long pid = node.pid();
            Sample s = new Sample((System.nanoTime() - started) / 1e9, node.id(), pid, heapAfterGc(pid),
                    count(Path.of("/proc", Long.toString(pid), "task")), count(Path.of("/proc", Long.toString(pid), "fd")),
                    diskBytes(node));
            record(s);
        }
    }

    private synchronized void record(Sample s) {
        samples.add(s);
        try {
            out.write(JSON.writeValueAsString(s));
            out.newLine();
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The heap in use right after a full collection, in bytes; -1 when jcmd could not tell. */
    static long heapAfterGc(long pid) {
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        if (jcmd(jcmd, pid, "GC.run") == null) {
            return -1;
        }
        String info = jcmd(jcmd, pid, "GC.heap_info");
        return info == null ? -1 : heapUsed(info);
    }

    /**
     * The bytes in use that {@code jcmd GC.heap_info} reports: the sum of its generation lines' "used" (serial
     * GC: "def new generation" and "tenured generation"; parallel: "PSYoungGen" and "ParOldGen"; G1: the one
     * "garbage-first heap" line); -1 when it names none of them.
     */
    static long heapUsed(String info) {
        long used = 0;
        Matcher m = HEAP_USED.matcher("");
        for (String line : info.split("\n")) {
            String t = line.trim();
            if ((t.startsWith("def new generation") || t.startsWith("tenured generation") || t.startsWith("garbage-first heap")
                    || t.startsWith("PSYoungGen") || t.startsWith("ParOldGen")) && m.reset(t).find()) {
                used += Long.parseLong(m.group(1)) * 1024;
            }
        }
        return used == 0 ? -1 : used;
    }

    private static String jcmd(String jcmd, long pid, String command) {
        try {
            Process p = new ProcessBuilder(jcmd, Long.toString(pid), command).redirectErrorStream(true).start();
            p.getOutputStream().close();
            if (!p.waitFor(JCMD_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return p.exitValue() == 0 ? text : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static long count(Path dir) {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.count();
        } catch (IOException | UncheckedIOException e) {
            return -1;
        }
    }

    private static long diskBytes(NodeProcess node) {
        Path storage = node.storage();
        if (!Files.isDirectory(storage)) {
            return -1;
        }
        long[] total = {0};
        try (Stream<Path> files = Files.walk(storage)) {
            files.filter(Files::isRegularFile).forEach(f -> {
                try {
                    total[0] += Files.size(f);
                } catch (IOException e) {
                    // Gone meanwhile (a compaction, a purge): not counted.
                }
            });
        } catch (IOException | UncheckedIOException e) {
            return -1;
        }
        return total[0];
    }

    /**
     * One line a node: each quantity's mean over the first fifth of the samples against the last fifth
     * (and the highest seen), e.g. {@code n1  heap after GC 41.2 -> 43.0 MiB (max 48.1), threads 96 -> 97, ...}.
     */
    public synchronized List<String> summary() {
        Map<String, List<Sample>> byNode = new TreeMap<>();
        samples.forEach(s -> byNode.computeIfAbsent(s.node(), k -> new ArrayList<>()).add(s));
        List<String> lines = new ArrayList<>();
        byNode.forEach((node, list) -> {
            if (list.size() < 5) {
                lines.add(node + "  " + list.size() + " samples: too few to compare");
                return;
            }
            int fifth = list.size() / 5;
            List<Sample> first = list.subList(0, fifth);
            List<Sample> last = list.subList(list.size() - fifth, list.size());
            lines.add(String.format(Locale.ROOT, "%s  %d samples; first fifth -> last fifth (max): heap after GC %s, threads %s, "
                            + "open files %s, storage %s", node, list.size(),
                    compare(first, last, list, Sample::heapAfterGc, 1 << 20, "MiB"),
                    compare(first, last, list, Sample::threads, 1, ""),
                    compare(first, last, list, Sample::openFiles, 1, ""),
                    compare(first, last, list, Sample::diskBytes, 1 << 20, "MiB")));
        });
        return lines;
    }

    private static String compare(List<Sample> first, List<Sample> last, List<Sample> all,
                                  java.util.function.ToLongFunction<Sample> value, double unit, String unitName) {
        double a = first.stream().mapToLong(value).filter(v -> v >= 0).average().orElse(-1) / unit;
        double b = last.stream().mapToLong(value).filter(v -> v >= 0).average().orElse(-1) / unit;
        double max = all.stream().mapToLong(value).max().orElse(-1) / unit;
        return String.format(Locale.ROOT, "%.1f -> %.1f (%.1f)%s", a, b, max, unitName.isEmpty() ? "" : " " + unitName);
    }

    @Override
    public void close() throws IOException {
        stopping = true;
        thread.interrupt();
        try {
            thread.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            out.close();
        }
    }
}
