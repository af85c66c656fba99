package io.ratchet.bench;

import java.util.Locale;

/**
 * The figures of one measured run, printed as the one JSON line peerbench prints for etcd and
 * ZooKeeper, field for field, so the lines can be set side by side.
 *
 * @param commitsPerSecond  operations that committed, per measured second
 * @param p50Millis         median latency of a committed operation (retries included), ms
 * @param p99Millis         99th percentile of the same, ms
 * @param attemptsPerCommit conditional writes per committed operation (1.0 without retries)
 * @param exhausted         operations that gave up after {@link Workload#MAX_ATTEMPTS} refused writes
 * @param errors            operations that failed with an exception during the measured seconds
 * @param clientSpread      the most commits one client made over the fewest another made: 1.0 is even
 *                          (a fair lock's aim); NaN when a client made none (printed as null). Not in
 *                          peerbench's line; an extra field at the end.
 * @param nodeCpuMicros     CPU the node processes used per committed operation, in microseconds (user and
 *                          system, all nodes together); NaN (null) when they are not on this machine. Extra.
 * @param benchCpuMicros    CPU the bench process used per committed operation, in microseconds. Extra.
 */
public record BenchReport(String workload, int clients, int instances, double seconds, double commitsPerSecond, double p50Millis,
                          double p99Millis, double attemptsPerCommit, long exhausted, long errors, double clientSpread,
                          double nodeCpuMicros, double benchCpuMicros) {

    public String toJsonLine() {
        return String.format(Locale.ROOT, "{\"system\":\"ratchet\",\"workload\":\"%s\",\"clients\":%d,\"instances\":%d,\"seconds\":%.1f,"
                        + "\"commits_per_s\":%.0f,\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"attempts_per_commit\":%.2f,"
                        + "\"exhausted\":%d,\"errors\":%d,\"client_spread\":%s,\"node_cpu_us_per_op\":%s,"
                        + "\"bench_cpu_us_per_op\":%s}",
                workload, clients, instances, seconds, commitsPerSecond, p50Millis, p99Millis, attemptsPerCommit, exhausted, errors,
                decimal(clientSpread, "%.2f"), decimal(nodeCpuMicros, "%.0f"), decimal(benchCpuMicros, "%.0f"));
    }

    private static String decimal(double value, String format) {
        return Double.isNaN(value) ? "null" : String.format(Locale.ROOT, format, value);
    }
}
