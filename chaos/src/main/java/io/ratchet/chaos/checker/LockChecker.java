package io.ratchet.chaos.checker;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.chaos.history.Operation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks the locks workload: holders of one lock, each with a fencing token, writing to a resource that
 * refuses tokens lower than one it already accepted. The same checks, and more, judge the fair-lock
 * workload ({@link #fair()}) and the semaphore workload ({@link #semaphore()}).
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
 *
 * <p><b>Fair locks</b> ({@link #fair()}) are checked as above, and for first come, first served: an
 * acquire's output also says where it queued, {@code "queued":q} (the index that created its entry) and
 * {@code "entry":k} (its key's last segment, which orders entries that share a place). A waiter that was not
 * granted and kept its place (no {@code "lost":true}) held a live entry at {@code (q, k)} from before any
 * grant of an entry behind it was decided until it gave up, which was no earlier than its invocation plus
 * its {@code wait_ms}. A grant of an entry behind it acknowledged before then was decided while that live
 * entry was ahead ({@code fifo-violated}); a holder read that shows such an entry at the head counts as a
 * grant too. Tokens (the holders' turn writes) must rise as for every lock.
 *
 * <p><b>Semaphores</b> ({@link #semaphore()}) have up to N holders, N being the acquires' {@code "permits"}
 * input: the windows above (one per holder, known by its owner and token) may overlap, but never more than N
 * at once ({@code too-many-holders}). Tokens need not rise in the acknowledged order (two waiters let in at
 * once may hear back in either order; turns decided in one log entry share a token), and they fence no
 * resource. The final read of the semaphore's permits item must still say N ({@code permits-changed}).
 */
public final class LockChecker implements Checker {
    public static final String WORKLOAD = "locks";
    /** The fair-lock workload's name, which {@link #fair()} checks. */
    public static final String FAIR_WORKLOAD = "fair-lock";
    /** The semaphore workload's name, which {@link #semaphore()} checks. */
    public static final String SEMAPHORE_WORKLOAD = "semaphore";
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

    private enum Kind { LOCK, FAIR, SEMAPHORE }

    private final String workload;
    private final Kind kind;

    /** The checker of the locks workload. */
    public LockChecker() {
        this(WORKLOAD, Kind.LOCK);
    }

    private LockChecker(String workload, Kind kind) {
        this.workload = workload;
        this.kind = kind;
    }

    /** The checker of the fair-lock workload: a lock's checks, and first come, first served. */
    public static LockChecker fair() {
        return new LockChecker(FAIR_WORKLOAD, Kind.FAIR);
    }

    /** The checker of the semaphore workload: at most N holders at once, each with its own token. */
    public static LockChecker semaphore() {
        return new LockChecker(SEMAPHORE_WORKLOAD, Kind.SEMAPHORE);
    }

    @Override
    public String workload() {
        return workload;
    }

    @Override
    public CheckResult checkOperations(List<Operation> operations) {
        List<Anomaly> anomalies = new ArrayList<>();
        Map<String, List<Grant>> grants = grants(operations, anomalies);
        Map<String, Integer> permits = permits(operations);
        for (Map.Entry<String, List<Grant>> lock : grants.entrySet()) {
            int n = permits.getOrDefault(lock.getKey(), 1);
            if (kind == Kind.SEMAPHORE) {
                checkSemaphore(lock.getKey(), lock.getValue(), n, anomalies);
            } else {
                checkLock(lock.getKey(), lock.getValue(), anomalies);
            }
        }
        List<String> notes = new ArrayList<>();
        String counted = grants.values().stream().mapToInt(List::size).sum() + " grants over " + grants.size()
                + (kind == Kind.SEMAPHORE ? " semaphores" : " locks");
        if (kind == Kind.SEMAPHORE) {
            checkFinalPermits(operations, permits, anomalies);
            notes.add(counted + " (permits " + permits + ")");
        } else {
            int accepted = checkResources(operations, anomalies);
            notes.add(counted + "; " + accepted + " fenced writes accepted");
        }
        if (kind == Kind.FAIR) {
            notes.add(checkFifo(operations, anomalies));
        }
        return CheckResult.of(workload, anomalies, Validity.VALID, notes);
    }

    /** The grants holders could act on, by lock; flags acquires answered with a lease long over. */
    private Map<String, List<Grant>> grants(List<Operation> operations, List<Anomaly> anomalies) {
        Map<String, List<Grant>> byLock = new TreeMap<>();
        Set<String> acknowledged = new HashSet<>();
        // Each owner's first acquire and its releases, found once: looked up per grant by scanning every
        // operation, an hour's soak (20,000 grants) took longer to check than to run.
        Map<String, Operation> firstAcquire = new HashMap<>();
        Map<String, List<Point>> releases = new HashMap<>();
        for (Operation op : operations) {
            String owner = op.invoke().input() == null ? null : op.invoke().input().path("owner").asText(null);
            if (owner != null && "acquire".equals(op.f())) {
                firstAcquire.putIfAbsent(owner, op);
            } else if (owner != null && "release".equals(op.f())) {
                releases.computeIfAbsent(owner, o -> new ArrayList<>()).add(new Point(op.invoke().time(), op.invoke().index()));
            }
        }
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
            Point until = releases.getOrDefault(owner, List.of()).stream()
                    .filter(p -> p.compareTo(from) > 0).min(Comparator.naturalOrder()).orElse(Point.NEVER);
            Operation acquire = firstAcquire.getOrDefault(owner, op);
            long lease = acquire.invoke().input().path("lease_ms").asLong(0);
            if (lease > 0) {
                // Counted from the invocation: the cluster stamps the grant no earlier than that.
                until = until.min(new Point(acquire.invoke().time() + lease * 1_000_000, Long.MIN_VALUE));
            }
            long token = out.path("token").asLong();
            if (until.compareTo(from) <= 0) {
                if (granted && from.time() - until.time() > LATE_SLACK_MS * 1_000_000) {
                    anomalies.add(new Anomaly(workload, "grant-after-lease", normal(op.key()), owner + " was granted token "
                            + token + " at " + from + ", after its lease ran out at " + until, List.of(op.completion().index())));
                }
                continue; // never held: its answer came after its window closed
            }
            byLock.computeIfAbsent(normal(op.key()), k -> new ArrayList<>())
                    .add(new Grant(normal(op.key()), owner, token, from, until, op.completion().index()));
        }
        return byLock;
    }

    private void checkLock(String lock, List<Grant> grants, List<Anomaly> anomalies) {
        List<Grant> inOrder = new ArrayList<>(grants);
        inOrder.sort(Comparator.comparing(Grant::from));
        Grant previous = null;
        Grant longest = null;
        for (Grant g : inOrder) {
            if (previous != null && g.token() <= previous.token()) {
                anomalies.add(new Anomaly(workload, "token-not-increasing", lock, g.owner() + " was granted token "
                        + g.token() + " after " + previous.owner() + " had been granted token " + previous.token(),
                        List.of(previous.line(), g.line())));
            }
            if (longest != null && g.from().compareTo(longest.until()) < 0) {
                anomalies.add(new Anomaly(workload, "overlapping-holders", lock, longest.owner() + " (token "
                        + longest.token() + ") held it from " + longest.from() + " until " + longest.until() + ", and "
                        + g.owner() + " (token " + g.token() + ") from " + g.from(), List.of(longest.line(), g.line())));
            }
            previous = g;
            if (longest == null || g.until().compareTo(longest.until()) > 0) {
                longest = g;
            }
        }
    }

    /** Up to {@code permits} windows at once: a window that opens while {@code permits} others are still open is one holder too many. */
    private void checkSemaphore(String semaphore, List<Grant> grants, int permits, List<Anomaly> anomalies) {
        List<Grant> inOrder = new ArrayList<>(grants);
        inOrder.sort(Comparator.comparing(Grant::from));
        List<Grant> open = new ArrayList<>();
        for (Grant g : inOrder) {
            open.removeIf(h -> h.until().compareTo(g.from()) <= 0);
            if (open.size() >= permits) {
                List<Long> lines = new ArrayList<>(open.stream().map(Grant::line).toList());
                lines.add(g.line());
                anomalies.add(new Anomaly(workload, "too-many-holders", semaphore, g.owner() + " (token " + g.token()
                        + ") was let in at " + g.from() + " while " + open.size() + " of its " + permits + " permits were held: "
                        + open.stream().map(h -> h.owner() + " (token " + h.token() + ", until " + h.until() + ")").toList(),
                        lines));
            }
            open.add(g);
        }
    }

    /** The number of permits each semaphore's acquires asked for (the workload always asks for the same). */
    private static Map<String, Integer> permits(List<Operation> operations) {
        Map<String, Integer> permits = new TreeMap<>();
        for (Operation op : operations) {
            if ("acquire".equals(op.f()) && op.invoke().input() != null && op.invoke().input().has("permits")) {
                permits.merge(normal(op.key()), op.invoke().input().path("permits").asInt(1), Math::min);
            }
        }
        return permits;
    }

    /** The final read of each semaphore's permits item (key {@code <queue>permits}) must show the N its holders used. */
    private void checkFinalPermits(List<Operation> operations, Map<String, Integer> permits, List<Anomaly> anomalies) {
        for (Operation read : operations) {
            if (!"read".equals(read.f()) || !"final".equals(read.process()) || !read.ok()) {
                continue;
            }
            String key = normal(read.key());
            String queue = key.endsWith("permits") ? key.substring(0, key.length() - "permits".length()) : key;
            Integer asked = permits.get(queue);
            JsonNode out = read.completion().output();
            if (asked != null && out.has("permits") && out.path("permits").asInt() != asked) {
                anomalies.add(new Anomaly(workload, "permits-changed", key, "holds " + out.path("permits").asInt()
                        + " permits at the end, but the holders asked for " + asked, List.of(read.completion().index())));
            }
        }
    }

    /**
     * First come, first served (see the class comment): no grant of a token above the place of a waiter
     * that kept its place may be acknowledged before that waiter could have given up. Returns a note.
     */
    private String checkFifo(List<Operation> operations, List<Anomaly> anomalies) {
        record Waiter(String lock, String owner, long place, String entry, long givesUpNoEarlierThan, long line) {
        }
        record Granted(String lock, String owner, long place, String entry, long token, Point acknowledged, long line) {
        }
        List<Waiter> waiters = new ArrayList<>();
        List<Granted> granted = new ArrayList<>();
        for (Operation op : operations) {
            if (!op.ok() || op.invoke().input() == null) {
                continue;
            }
            String owner = op.invoke().input().path("owner").asText(null);
            JsonNode out = op.completion().output();
            Point at = new Point(op.completion().time(), op.completion().index());
            boolean grant = "acquire".equals(op.f()) && out.path("granted").asBoolean()
                    || "holder".equals(op.f()) && owner != null && owner.equals(out.path("holder").asText(null));
            if (grant && out.has("queued")) {
                granted.add(new Granted(normal(op.key()), owner, out.path("queued").asLong(), out.path("entry").asText(""),
                        out.path("token").asLong(), at, op.completion().index()));
            } else if ("acquire".equals(op.f()) && !grant && out.has("queued") && !out.path("lost").asBoolean()
                    && op.invoke().input().has("wait_ms")) {
                long wait = op.invoke().input().path("wait_ms").asLong();
                waiters.add(new Waiter(normal(op.key()), owner, out.path("queued").asLong(), out.path("entry").asText(""),
                        op.invoke().time() + wait * 1_000_000, op.completion().index()));
            }
        }
        for (Granted g : granted) {
            for (Waiter w : waiters) {
                boolean wasAhead = w.place() < g.place() || w.place() == g.place() && w.entry().compareTo(g.entry()) < 0;
                if (w.lock().equals(g.lock()) && wasAhead && g.acknowledged().time() < w.givesUpNoEarlierThan()) {
                    anomalies.add(new Anomaly(workload, "fifo-violated", g.lock(), g.owner() + " (queued at " + g.place() + "/"
                            + g.entry() + ") was granted token " + g.token() + " at " + g.acknowledged() + " while " + w.owner()
                            + ", queued ahead of it at " + w.place() + "/" + w.entry() + ", still waited with its place (until at least "
                            + new Point(w.givesUpNoEarlierThan(), 0) + ") and was never served",
                            List.of(w.line(), g.line())));
                }
            }
        }
        return waiters.size() + " waiters gave up with their place kept; every grant was checked against them";
    }

    /** Checks each fenced resource; returns how many writes it accepted. */
    private int checkResources(List<Operation> operations, List<Anomaly> anomalies) {
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
                    anomalies.add(new Anomaly(workload, "stale-token-accepted", resource.getKey(), "accepted token "
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
                            anomalies.add(new Anomaly(workload, "resource-token-regressed", resource.getKey(),
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
