package io.ratchet.chaos.checker;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.chaos.history.Operation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks the locks workload: holders of one lock, each with a fencing token, writing to a resource that
 * refuses tokens lower than one it already accepted.
 *
 * <ul>
 *   <li>Fencing tokens of acknowledged grants of one lock strictly increase in the order the grants
 *       were acknowledged.</li>
 *   <li>No two holders' valid windows overlap on the harness clock. A window opens when the holder learns
 *       it holds the lock (the grant's answer, or a read that shows it after an unanswered acquire) and
 *       closes when it invokes its release or, for a lease, when the lease runs out counted from the
 *       acquire's invocation, whichever comes first. A window that closes before it opens (the answer
 *       came after the lease ran out) was never held, and takes part in neither this check nor the
 *       one above.</li>
 *   <li>No acquire answers with a lease more than {@link #LATE_SLACK_MS} after that lease ran out counted
 *       from its invocation: the lock client gives such a grant back instead (a late answer can carry a
 *       lease a later holder has since been granted). The slack covers only the harness's own
 *       bookkeeping around the call (the client judges on its clock moments after the invocation is
 *       recorded and moments before the answer is); a late answer is late by seconds.</li>
 *   <li>The resource never accepts a token lower than one it accepted before (in the order of its own
 *       index), and at the end holds a token no lower than the highest it acknowledged.</li>
 * </ul>
 *
 * <p>History lines it reads:
 * <ul>
 *   <li>{@code acquire}: key the lock; input {@code {"owner":o}} and, for a lease, {@code "lease_ms"};
 *       output {@code {"granted":true,"token":t}} or {@code {"granted":false,...}};</li>
 *   <li>{@code holder}: after an unanswered acquire, a read of the lock on behalf of attempt {@code o}:
 *       input {@code {"owner":o}}, output {@code {"holder":h,"token":t}} ({@code holder} absent when free);</li>
 *   <li>{@code release}: input {@code {"owner":o,"token":t}};</li>
 *   <li>{@code write}: key the resource; input {@code {"owner":o,"token":t}}; output
 *       {@code {"accepted":true,"index":i}} or {@code {"accepted":false,"highest":h}};</li>
 *   <li>{@code read} by process {@code final}: key the resource; output {@code {"token":t,"index":i}}.</li>
 * </ul>
 */
public final class LockChecker implements Checker {
    public static final String WORKLOAD = "locks";
    /** How far past its lease an acquire's answer may be recorded before it counts as a late grant. */
    static final long LATE_SLACK_MS = 250;

    /** A point on the harness clock; {@code line} orders points with equal times the way the history does. */
    record Point(long time, long line) implements Comparable<Point> {
        static final Point NEVER = new Point(Long.MAX_VALUE, Long.MAX_VALUE);

        @Override
        public int compareTo(Point o) {
            return time != o.time ? Long.compare(time, o.time) : Long.compare(line, o.line);
        }

        Point min(Point o) {
            return compareTo(o) <= 0 ? this : o;
        }

        @Override
        public String toString() {
            return this == NEVER ? "never" : String.format(Locale.ROOT, "%.3f s", time / 1e9);
        }
    }

    /** A holder's grant and the window in which it may act on it. */
    record Grant(String lock, String owner, long token, Point from, Point until, long line) {
    }

    @Override
    public String workload() {
        return WORKLOAD;
    }

    @Override
    public CheckResult checkOperations(List<Operation> operations) {
        List<Anomaly> anomalies = new ArrayList<>();
        Map<String, List<Grant>> grants = grants(operations, anomalies);
        for (Map.Entry<String, List<Grant>> lock : grants.entrySet()) {
            checkLock(lock.getKey(), lock.getValue(), anomalies);
        }
        int accepted = checkResources(operations, anomalies);
        List<String> notes = List.of(grants.values().stream().mapToInt(List::size).sum() + " grants over "
                + grants.size() + " locks; " + accepted + " fenced writes accepted");
        return CheckResult.of(WORKLOAD, anomalies, Validity.VALID, notes);
    }

    /** The grants holders could act on, by lock; flags acquires answered with a lease long over. */
    private static Map<String, List<Grant>> grants(List<Operation> operations, List<Anomaly> anomalies) {
        Map<String, List<Grant>> byLock = new TreeMap<>();
        Set<String> acknowledged = new HashSet<>();
        for (Operation op : operations) {
            String owner = op.invoke().input() == null ? null : op.invoke().input().path("owner").asText(null);
            if (!op.ok() || owner == null) {
                continue;
            }
            JsonNode out = op.completion().output();
            boolean granted = "acquire".equals(op.f()) && out.path("granted").asBoolean();
            boolean recovered = "holder".equals(op.f()) && owner.equals(out.path("holder").asText(null));
            if ((!granted && !recovered) || !acknowledged.add(owner)) {
                continue;
            }
            Point from = new Point(op.completion().time(), op.completion().index());
            Point until = releaseOf(operations, owner, from);
            Operation acquire = operations.stream()
                    .filter(a -> "acquire".equals(a.f()) && owner.equals(a.invoke().input().path("owner").asText(null)))
                    .findFirst().orElse(op);
            long lease = acquire.invoke().input().path("lease_ms").asLong(0);
            if (lease > 0) {
                // Counted from the invocation: the cluster stamps the grant no earlier than that.
                until = until.min(new Point(acquire.invoke().time() + lease * 1_000_000, Long.MIN_VALUE));
            }
            long token = out.path("token").asLong();
            if (until.compareTo(from) <= 0) {
                if (granted && from.time() - until.time() > LATE_SLACK_MS * 1_000_000) {
                    anomalies.add(new Anomaly(WORKLOAD, "grant-after-lease", normal(op.key()), owner + " was granted token "
                            + token + " at " + from + ", after its lease ran out at " + until, List.of(op.completion().index())));
                }
                continue; // never held: its answer came after its window closed
            }
            byLock.computeIfAbsent(normal(op.key()), k -> new ArrayList<>())
                    .add(new Grant(normal(op.key()), owner, token, from, until, op.completion().index()));
        }
        return byLock;
    }

    /** When the holder invoked its release, or never. */
    private static Point releaseOf(List<Operation> operations, String owner, Point after) {
        return operations.stream()
                .filter(op -> "release".equals(op.f()) && owner.equals(op.invoke().input().path("owner").asText(null)))
                .map(op -> new Point(op.invoke().time(), op.invoke().index()))
                .filter(p -> p.compareTo(after) > 0)
                .min(Comparator.naturalOrder()).orElse(Point.NEVER);
    }

    private static void checkLock(String lock, List<Grant> grants, List<Anomaly> anomalies) {
        List<Grant> inOrder = new ArrayList<>(grants);
        inOrder.sort(Comparator.comparing(Grant::from));
        Grant previous = null;
        Grant longest = null;
        for (Grant g : inOrder) {
            if (previous != null && g.token() <= previous.token()) {
                anomalies.add(new Anomaly(WORKLOAD, "token-not-increasing", lock, g.owner() + " was granted token "
                        + g.token() + " after " + previous.owner() + " had been granted token " + previous.token(),
                        List.of(previous.line(), g.line())));
            }
            if (longest != null && g.from().compareTo(longest.until()) < 0) {
                anomalies.add(new Anomaly(WORKLOAD, "overlapping-holders", lock, longest.owner() + " (token "
                        + longest.token() + ") held it from " + longest.from() + " until " + longest.until() + ", and "
                        + g.owner() + " (token " + g.token() + ") from " + g.from(), List.of(longest.line(), g.line())));
            }
            previous = g;
            if (longest == null || g.until().compareTo(longest.until()) > 0) {
                longest = g;
            }
        }
    }

    /** Checks each fenced resource; returns how many writes it accepted. */
    private static int checkResources(List<Operation> operations, List<Anomaly> anomalies) {
        Map<String, List<Operation>> accepted = new TreeMap<>();
        for (Operation op : operations) {
            if ("write".equals(op.f()) && op.ok() && op.completion().output().path("accepted").asBoolean()) {
                accepted.computeIfAbsent(normal(op.key()), k -> new ArrayList<>()).add(op);
            }
        }
        int count = 0;
        for (Map.Entry<String, List<Operation>> resource : accepted.entrySet()) {
            List<Operation> writes = new ArrayList<>(resource.getValue());
            writes.sort(Comparator.comparingLong(op -> op.completion().output().path("index").asLong()));
            count += writes.size();
            Operation highest = null;
            for (Operation w : writes) {
                if (highest != null && token(w) < token(highest)) {
                    anomalies.add(new Anomaly(WORKLOAD, "stale-token-accepted", resource.getKey(), "accepted token "
                            + token(w) + " from " + w.invoke().input().path("owner").asText() + " after it had accepted token "
                            + token(highest), List.of(highest.completion().index(), w.completion().index())));
                }
                if (highest == null || token(w) > token(highest)) {
                    highest = w;
                }
            }
            Operation top = highest;
            operations.stream()
                    .filter(op -> "read".equals(op.f()) && "final".equals(op.process()) && op.ok()
                            && resource.getKey().equals(normal(op.key())))
                    .forEach(read -> {
                        long end = read.completion().output().path("token").asLong();
                        if (end < token(top)) {
                            anomalies.add(new Anomaly(WORKLOAD, "resource-token-regressed", resource.getKey(),
                                    "holds token " + end + " at the end, below the accepted token " + token(top),
                                    List.of(top.completion().index(), read.completion().index())));
                        }
                    });
        }
        return count;
    }

    private static long token(Operation op) {
        return op.invoke().input().path("token").asLong();
    }

    private static String normal(String key) {
        return key.toLowerCase(Locale.ROOT);
    }
}
