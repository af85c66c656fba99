package io.ratchet.chaos.checker;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.chaos.history.Operation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Checks the renew workload: a process that holds a lock nobody else wants, and renews it every third of
 * its lease, must never find it gone. Every renewal answered "lost", every read after an unanswered
 * renewal that finds the owner no longer holding, and every release that finds the lock already gone is a
 * {@code lease-lost} anomaly. And a renewal must land within the lease: for each renewal that landed, the
 * lease left when its answer came, counted from when the last renewal (or the acquire) that landed before
 * it was sent, as the lock client counts it; a renewal answered after that is {@code renewal-late}, since
 * the holder could not know it still held the lock in between. A renewal answered "lost" after that time
 * is {@code renewal-late} too, not {@code lease-lost}: the lease ran out while it waited, which is a gap
 * of the cluster's, not a lease ended early. The least lease left is reported.
 *
 * <p>History lines it reads, all keyed by the lock and naming the owner in the input:
 * <ul>
 *   <li>{@code acquire}: input {@code {"owner":o,"lease_ms":l}}; output {@code {"granted":b,...}};</li>
 *   <li>{@code renew}: input {@code {"owner":o,"lease_ms":l,"token":t,"index":i}}; output
 *       {@code {"renewed":true,"index":i}} or {@code {"renewed":false,"lost":true}};</li>
 *   <li>{@code holder}: input {@code {"owner":o}}; output {@code {"holds":b,...}}, read after a renewal
 *       without an answer;</li>
 *   <li>{@code release}: input {@code {"owner":o,...}}; output {@code {"released":b}}.</li>
 * </ul>
 */
public final class RenewChecker implements Checker {
    public static final String WORKLOAD = "renew";

    @Override
    public String workload() {
        return WORKLOAD;
    }

    @Override
    public CheckResult checkOperations(List<Operation> operations) {
        Map<String, List<Operation>> byOwner = new LinkedHashMap<>();
        operations.stream().sorted(Comparator.comparingLong(Operation::callIndex)).forEach(op -> {
            String owner = op.invoke().input() == null ? null : op.invoke().input().path("owner").asText(null);
            if (owner != null) {
                byOwner.computeIfAbsent(owner, o -> new ArrayList<>()).add(op);
            }
        });
        List<Anomaly> anomalies = new ArrayList<>();
        Tally tally = new Tally();
        byOwner.forEach((owner, ops) -> checkOwner(owner, ops, anomalies, tally));
        List<String> notes = new ArrayList<>();
        notes.add(tally.holds + " holds, " + tally.renewals + " renewals landed, " + tally.unanswered
                + " without an answer" + (tally.renewals == 0 ? "" : "; the least lease left when a renewal's answer came: "
                + millis(tally.leastLeft) + " ms of " + tally.leaseMillis + ", and the longest renewal took "
                + millis(tally.longest) + " ms"));
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("holds", tally.holds);
        details.put("renewals", tally.renewals);
        if (tally.renewals > 0) {
            details.put("least_lease_left_ms", millis(tally.leastLeft));
            details.put("longest_renewal_ms", millis(tally.longest));
        }
        return CheckResult.of(WORKLOAD, anomalies, Validity.VALID, notes, details);
    }

    /** What the whole history came to. */
    private static final class Tally {
        long holds;
        long renewals;
        long unanswered;
        long leastLeft = Long.MAX_VALUE;
        long longest;
        long leaseMillis;
    }

    private static void checkOwner(String owner, List<Operation> ops, List<Anomaly> anomalies, Tally tally) {
        Operation landed = null; // the acquire or renewal whose send the lease now runs from
        long leaseNanos = 0;
        for (Operation op : ops) {
            JsonNode out = op.ok() ? op.completion().output() : null;
            switch (op.f()) {
                case "acquire" -> {
                    if (out != null && out.path("granted").asBoolean()) {
                        landed = op;
                        leaseNanos = TimeUnit.MILLISECONDS.toNanos(op.invoke().input().path("lease_ms").asLong());
                        tally.leaseMillis = millis(leaseNanos);
                        tally.holds++;
                    }
                }
                case "renew" -> {
                    if (op.unknown()) {
                        tally.unanswered++;
                    } else if (out != null && out.path("renewed").asBoolean()) {
                        if (landed != null) {
                            long left = landed.invoke().time() + leaseNanos - op.completion().time();
                            tally.leastLeft = Math.min(tally.leastLeft, left);
                            if (left < 0) {
                                anomalies.add(late(owner, op, landed, left, ": for that long it could not know it held the lock"));
                            }
                        }
                        tally.longest = Math.max(tally.longest, op.completion().time() - op.invoke().time());
                        tally.renewals++;
                        landed = op;
                    } else if (out != null && out.path("lost").asBoolean()) {
                        long left = landed == null ? 0 : landed.invoke().time() + leaseNanos - op.completion().time();
                        if (left < 0) {
                            // Gone because the renewal waited past the lease, not taken early: a gap, told apart so.
                            tally.leastLeft = Math.min(tally.leastLeft, left);
                            anomalies.add(late(owner, op, landed, left, ", and found the lock gone: lost to the wait, not taken early"));
                        } else {
                            anomalies.add(lost(owner, op, landed, "a renewal found it gone"));
                        }
                        landed = null;
                    }
                }
                case "holder" -> {
                    if (out != null && !out.path("holds").asBoolean(true)) {
                        anomalies.add(lost(owner, op, landed, "after a renewal without an answer, a read found it gone"));
                        landed = null;
                    }
                }
                case "release" -> {
                    if (out != null && !out.path("released").asBoolean(true)) {
                        anomalies.add(lost(owner, op, landed, "its release found it already gone"));
                    }
                    landed = null;
                }
                default -> {
                    // No other operation names an owner.
                }
            }
        }
    }

    /** A renewal answered {@code -left} nanos after the lease counted from {@code landed}'s send had run out, then {@code what}. */
    private static Anomaly late(String owner, Operation op, Operation landed, long left, String what) {
        return new Anomaly(WORKLOAD, "renewal-late", op.key(), owner + "'s renewal was answered " + millis(-left)
                + " ms after its lease, counted from the send of the last renewal that landed, had run out" + what,
                List.of(landed.callIndex(), op.callIndex(), op.returnIndex()));
    }

    private static Anomaly lost(String owner, Operation op, Operation landed, String how) {
        List<Long> lines = new ArrayList<>();
        String since = "";
        if (landed != null) {
            lines.add(landed.callIndex());
            since = ", " + millis(op.invoke().time() - landed.invoke().time()) + " ms after the last renewal that landed was sent";
        }
        lines.add(op.callIndex());
        lines.add(op.returnIndex());
        return new Anomaly(WORKLOAD, "lease-lost", op.key(), owner + " held the lock and renewed it every third of its lease, but "
                + how + since, lines);
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
