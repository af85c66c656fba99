package io.ratchet.chaos.nemesis;

import io.ratchet.chaos.checker.CheckResult;
import io.ratchet.chaos.cluster.Cluster;
import io.ratchet.chaos.cluster.NodeProcess;
import io.ratchet.client.AdminRefusedException;
import io.ratchet.client.ClusterAdmin;
import io.ratchet.client.ClusterUnavailableException;
import io.ratchet.client.NodeStatus;
import io.ratchet.client.RatchetException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.function.Predicate;

/**
 * Changes the cluster's membership while the clients run, one change a fault, as an operator would:
 * <em>grow</em> (start a spare node on empty storage with {@code --join} and add it), <em>shrink</em>
 * (remove a member, stop it, delete its storage), <em>replace</em> (remove a member, stop it, delete its
 * storage, start it again with {@code --join} and add it back: how a dead disk is recovered) or
 * <em>transfer</em> leadership to another voter. Voters stay between 3 and 5, and a member is removed only
 * when the voters left would still have a live majority.
 *
 * <p>What the cluster holds is read from it, never assumed. Before each change, and after it whatever the
 * call answered (done, refused, no leader, outcome unknown), the nemesis waits for a settled configuration:
 * the leader's, committed, with no change under way. A node's storage is deleted only when that
 * configuration does not name it, so a member is never wiped, and a removed node never comes back on its
 * old data: it joins again as a new member. The node a change acts on is {@linkplain NodeProcess#claim()
 * claimed} for the change, so a kill nemesis running beside it leaves it alone; and a node a kill holds
 * is never chosen.
 *
 * <p>On a cluster of several Raft groups each change is made in every group, one after another, and may
 * stop half way (a group's leader lost, a node that stopped answering): the admin's answer says so and asks
 * for the change again. The nemesis asks again at once, and failing that finishes it before any other change
 * (the groups in group order: a group 0 that names the node had an add stopped, one that does not, a
 * removal). A node is wiped only when no group names it.
 *
 * <p>Refusals are expected when kills run at the same time (a change under way, a voter just restarted
 * that the leader does not count as live yet): each is a {@link FaultRefused}, recorded, and the loop goes
 * on.
 */
public final class MembershipNemesis implements Nemesis {
    /** Fewer than 3 voters tolerate no failure; Ratchet is run with 3 or 5. */
    static final int MIN_VOTERS = 3;
    static final int MAX_VOTERS = 5;
    /** How long the configuration may take to settle: an election, a restarted node catching up. */
    private static final Duration SETTLE = Duration.ofSeconds(30);
    /** Before a change, a shorter wait: without a settled configuration there is nothing to act on. */
    private static final Duration SETTLE_BEFORE = Duration.ofSeconds(10);
    /** A node JVM's start on a loaded 2-core machine. */
    private static final Duration JOINER_START = Duration.ofSeconds(60);
    private static final Duration POLL = Duration.ofMillis(250);
    /** Times a change no leader took is asked again, once the configuration has settled. */
    private static final int RETRIES = 2;
    /** A call's error, as far as the report quotes it (a failed search for the leader lists every try). */
    private static final int MAX_MESSAGE = 240;

    private enum Step {
        GROW(2), SHRINK(2), REPLACE(2), TRANSFER(1);

        final int weight;

        Step(int weight) {
            this.weight = weight;
        }
    }

    private final Cluster cluster;
    private final Map<String, Integer> changes = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();
    private final ConfigurationCheck check = new ConfigurationCheck();

    public MembershipNemesis(Cluster cluster) {
        this.cluster = cluster;
        for (String counter : List.of("added", "removed", "transferred", "refused", "unknown", "refused_but_done",
                "half_done", "finished")) {
            changes.put(counter, 0);
        }
    }

    @Override
    public String name() {
        return "membership";
    }

    @Override
    public Optional<Fault> inject(Random random) throws IOException, FaultRefused {
        try (ClusterAdmin admin = cluster.openAdmin()) {
            return inject(admin, random);
        }
    }

    private Optional<Fault> inject(ClusterAdmin admin, Random random) throws IOException, FaultRefused {
        Optional<SettledConfiguration> settled = SettledConfiguration.read(admin, SETTLE_BEFORE);
        if (settled.isEmpty()) {
            return Optional.empty();
        }
        SettledConfiguration view = settled.get();
        if (!view.agreed()) {
            return Optional.of(finish(admin, view));
        }
        check.compare(view, check.voters(), null, null, "before a change");
        tidy(view);
        List<Step> steps = new ArrayList<>();
        int voters = view.voters().size();
        if (voters < MAX_VOTERS && !spares(view).isEmpty()) {
            steps.add(Step.GROW);
        }
        if (voters > MIN_VOTERS && !removable(view).isEmpty()) {
            steps.add(Step.SHRINK);
            steps.add(Step.REPLACE);
        }
        if (!transferTargets(view).isEmpty()) {
            steps.add(Step.TRANSFER);
        }
        if (steps.isEmpty()) {
            return Optional.empty();
        }
        long started = System.nanoTime();
        Optional<Fault> done;
        try {
            done = switch (pick(steps, random)) {
                case GROW -> grow(admin, view, random);
                case SHRINK -> shrink(admin, view, random);
                case REPLACE -> replace(admin, view, random);
                case TRANSFER -> transfer(admin, view, random);
            };
        } catch (IOException | RuntimeException e) {
            check.forget(); // the change's outcome is unknown: the next settled configuration is the new base
            throw e;
        }
        String took = String.format(Locale.ROOT, " (%.1f s)", (System.nanoTime() - started) / 1e9);
        return done.map(f -> Fault.lasting(f.kind(), f.description() + took));
    }

    private Optional<Fault> grow(ClusterAdmin admin, SettledConfiguration view, Random random) throws IOException, FaultRefused {
        return onOneClaimed(spares(view), random, node -> {
            SettledConfiguration after = join(admin, node);
            return Fault.lasting("grow", "grew: added " + node.id() + " on empty storage; " + after);
        });
    }

    private Optional<Fault> shrink(ClusterAdmin admin, SettledConfiguration view, Random random) throws IOException, FaultRefused {
        return onOneClaimed(removable(view), random, node -> {
            String who = view.describe(node.id());
            SettledConfiguration after = leave(admin, node);
            return Fault.lasting("shrink", "shrank: removed " + who + ", stopped it, deleted its storage; " + after);
        });
    }

    private Optional<Fault> replace(ClusterAdmin admin, SettledConfiguration view, Random random) throws IOException, FaultRefused {
        return onOneClaimed(removable(view), random, node -> {
            String who = view.describe(node.id());
            leave(admin, node);
            try {
                SettledConfiguration after = join(admin, node);
                return Fault.lasting("replace", "replaced " + who + ": removed, storage deleted, added back "
                        + "on empty storage; " + after);
            } catch (FaultRefused e) {
                // The removal stands: a change happened, though not the whole replacement.
                return Fault.lasting("replace", "removed " + who + " and deleted its storage; adding it back "
                        + "did not happen (" + e.getMessage() + ")");
            }
        });
    }

    /** A change made to one node of the candidates, which is claimed (kept from other nemeses) while it runs. */
    private interface NodeChange {
        Fault on(NodeProcess node) throws IOException, FaultRefused;
    }

    /** Claims one of {@code candidates} at random and makes {@code change} to it; empty when none is free. */
    private static Optional<Fault> onOneClaimed(List<NodeProcess> candidates, Random random, NodeChange change)
            throws IOException, FaultRefused {
        Optional<NodeProcess> claimed = claimOne(candidates, random);
        if (claimed.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(change.on(claimed.get()));
        } finally {
            claimed.get().release();
        }
    }

    private Optional<Fault> transfer(ClusterAdmin admin, SettledConfiguration view, Random random) throws IOException, FaultRefused {
        List<NodeProcess> targets = transferTargets(view);
        NodeProcess target = targets.get(random.nextInt(targets.size()));
        String from = view.leader();
        Outcome outcome = change(admin, () -> admin.transferLeadership(target.id()), v -> v.leader().equals(target.id()), v -> false);
        if (outcome.refused()) {
            count("refused");
            throw new FaultRefused("transferring leadership from " + from + " to " + target.id() + ": " + outcome);
        }
        if (outcome.unknown()) {
            List<String> before = check.voters();
            SettledConfiguration after = resolve(admin, outcome, "transferring leadership to " + target.id());
            check.compare(after, before, null, null, "after a leader transfer");
            if (!after.leader().equals(target.id())) {
                throw new FaultRefused("transferring leadership to " + target.id() + ": " + outcome + "; "
                        + after.leader() + " leads");
            }
        }
        count("transferred");
        return Optional.of(Fault.lasting("transfer", "transferred leadership from " + from + " to " + target.id()));
    }

    /**
     * Starts a node out of service on empty storage with {@code --join} and adds it. Returns the settled
     * configuration that names it; when it is not added, stops it, deletes its storage and throws.
     */
    private SettledConfiguration join(ClusterAdmin admin, NodeProcess node) throws IOException, FaultRefused {
        node.startJoining();
        try {
            awaitAnswering(node);
        } catch (IOException e) {
            node.retire("never answered while starting to join");
            throw e;
        }
        return add(admin, node, "adding " + node.id());
    }

    /**
     * Adds a running node to every group. Returns the settled configuration in which every group names it;
     * throws when none does (stopping the node and deleting its storage) or only some do (leaving it running:
     * the next change finishes the add).
     */
    private SettledConfiguration add(ClusterAdmin admin, NodeProcess node, String what) throws IOException, FaultRefused {
        List<String> before = check.voters();
        Outcome outcome = change(admin, () -> admin.addMember(node.id(), node.address()),
                v -> v.memberOfEvery(node.id()), v -> v.member(node.id()));
        SettledConfiguration after = resolve(admin, outcome, what);
        if (after.memberOfEvery(node.id())) {
            check.compare(after, before, node.id(), null, "after " + what);
            done("added", outcome, what);
            return after;
        }
        if (after.member(node.id())) {
            throw halfDone(what, outcome, after);
        }
        check.compare(after, before, null, null, "after " + what);
        if (outcome.refused()) {
            count("refused");
        }
        node.retire("not added (" + outcome + ")");
        throw new FaultRefused(what + ": " + outcome + "; not a member, so stopped and its storage deleted");
    }

    /**
     * Removes a member from every group; once no group's settled configuration names it, stops it and deletes
     * its storage. Throws, the node still running, when some group still names it.
     */
    private SettledConfiguration leave(ClusterAdmin admin, NodeProcess node) throws IOException, FaultRefused {
        String what = "removing " + node.id();
        List<String> before = check.voters();
        Outcome outcome = change(admin, () -> admin.removeMember(node.id()), v -> !v.member(node.id()),
                v -> !v.memberOfEvery(node.id()));
        SettledConfiguration after = resolve(admin, outcome, what);
        if (!after.member(node.id())) {
            check.compare(after, before, null, node.id(), "after " + what);
            done("removed", outcome, what);
            node.retire("removed from the cluster (configuration at index " + after.index() + ")");
            return after;
        }
        if (!after.memberOfEvery(node.id())) {
            throw halfDone(what, outcome, after);
        }
        check.compare(after, before, null, null, "after " + what);
        if (outcome.refused()) {
            count("refused");
        }
        throw new FaultRefused(what + ": " + outcome + "; it is still a member");
    }

    /**
     * A change some groups have and others not even after asking again: counted, noted with the admin's
     * answer, and left for the next change to {@linkplain #finish finish}. The voters are compared again
     * only once the groups agree.
     */
    private FaultRefused halfDone(String what, Outcome outcome, SettledConfiguration after) {
        count("half_done");
        check.forget();
        String line = what + " stopped half way: " + outcome + "; " + after;
        note("HALF DONE: " + line);
        return new FaultRefused(line + "; the next change finishes it (nothing was wiped)");
    }

    /**
     * Finishes the changes that stopped half way, before any other: the same change asked again, as the
     * admin's answer says. Changes are made in group order, so a node group 0 names had an add stopped (it is
     * running: it is a member of group 0), and one it does not, a removal.
     */
    private Fault finish(ClusterAdmin admin, SettledConfiguration view) throws IOException, FaultRefused {
        check.forget();
        Map.Entry<String, List<Integer>> first = view.halfway().entrySet().iterator().next();
        String id = first.getKey();
        boolean adding = first.getValue().contains(0);
        NodeProcess node = cluster.node(id);
        if (!node.claim()) {
            throw new FaultRefused("finishing " + (adding ? "an add of " : "a removal of ") + id + ": it is held by another fault");
        }
        try {
            String was = id + " was in groups " + first.getValue() + " of " + view.groups().size();
            SettledConfiguration after = adding ? add(admin, node, "finishing the add of " + id)
                    : leave(admin, node);
            count("finished");
            return Fault.lasting("finish", (adding ? "finished adding " : "finished removing ") + was + "; " + after);
        } finally {
            node.release();
        }
    }

    /**
     * A node in service that the settled configuration does not name (a change whose outcome was learnt
     * only later, a join that never completed) is taken out of service, so it never lingers nor comes back
     * after a kill.
     */
    private void tidy(SettledConfiguration view) throws IOException {
        for (NodeProcess node : cluster.nodes()) {
            if (node.inService() && !view.member(node.id()) && node.claim()) {
                try {
                    node.retire("in no configuration (the settled one, at index " + view.index() + ")");
                    note(node.id() + " was in service but in no configuration: stopped and wiped");
                } finally {
                    node.release();
                }
            }
        }
    }

    // ---- choosing

    private static Step pick(List<Step> steps, Random random) {
        int total = steps.stream().mapToInt(s -> s.weight).sum();
        int r = random.nextInt(total);
        for (Step s : steps) {
            r -= s.weight;
            if (r < 0) {
                return s;
            }
        }
        throw new IllegalStateException("unreachable");
    }

    /** Node slots that are no member and not in service: a spare never started, or a retired node. */
    private List<NodeProcess> spares(SettledConfiguration view) {
        return cluster.nodes().stream()
                .filter(n -> !view.member(n.id()) && !n.inService() && !n.alive() && !n.claimed())
                .toList();
    }

    /**
     * Voters that may go: running, live, held by no other fault, and the live voters left without them are
     * a majority of the voters now. Not only of those that remain: until the change commits, the old and the
     * new voters both decide (joint consensus), and a departing voter of Ratis 3.3.0 may drop out of that
     * phase (a chaos run saw one whose election timer fired find itself in no new configuration and shut
     * down), so the old majority must be found among the voters that stay: from 4 voters, all 3 left. The
     * leader's own rule counts a majority of those that remain; this is an operator's caution on top.
     */
    private List<NodeProcess> removable(SettledConfiguration view) {
        List<String> voters = view.voters();
        int majority = voters.size() / 2 + 1;
        List<NodeProcess> removable = new ArrayList<>();
        for (String id : voters) {
            NodeProcess node = cluster.node(id);
            long liveLeft = voters.stream().filter(v -> !v.equals(id) && view.live(v)).count();
            if (running(node) && view.live(id) && liveLeft >= majority) {
                removable.add(node);
            }
        }
        return removable;
    }

    private List<NodeProcess> transferTargets(SettledConfiguration view) {
        return view.voters().stream().filter(id -> !id.equals(view.leader()) && view.live(id))
                .map(cluster::node).filter(MembershipNemesis::running).toList();
    }

    private static boolean running(NodeProcess node) {
        return node.alive() && !node.paused() && !node.claimed();
    }

    private static Optional<NodeProcess> claimOne(List<NodeProcess> candidates, Random random) {
        List<NodeProcess> shuffled = new ArrayList<>(candidates);
        Collections.shuffle(shuffled, random);
        return shuffled.stream().filter(NodeProcess::claim).findFirst();
    }

    // ---- reading the cluster

    /** The settled configuration after a change, whatever its call answered; without one the outcome stays unknown. */
    private static SettledConfiguration resolve(ClusterAdmin admin, Outcome outcome, String what) throws IOException {
        return SettledConfiguration.read(admin, SETTLE).orElseThrow(() -> new IOException(what + ": " + outcome
                + "; the configuration did not settle within " + SETTLE.toSeconds() + " s, so its outcome is unknown"
                + " (nothing was wiped)"));
    }

    /** Waits until a node started to join answers its status call (it refuses to be added while starting). */
    private void awaitAnswering(NodeProcess node) throws IOException {
        long deadline = System.nanoTime() + JOINER_START.toNanos();
        try (ClusterAdmin own = ClusterAdmin.connect(cluster.options(node.id() + "=" + node.address())
                .withTimeouts(Duration.ofSeconds(2), 1, Duration.ofSeconds(2)))) {
            while (true) {
                if (!node.alive()) {
                    throw new IOException(node.id() + " exited while starting to join; see its log");
                }
                String role = own.status().stream().filter(s -> s.id().equals(node.id())).map(NodeStatus::role)
                        .findFirst().orElse("UNREACHABLE");
                if (!"UNREACHABLE".equals(role) && !NodeStatus.STARTING.equals(role)) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException(node.id() + " did not answer within " + JOINER_START.toSeconds() + " s of its start");
                }
                SettledConfiguration.pause(POLL);
            }
        }
    }

    // ---- outcomes and counts

    /**
     * What a change call answered: done, refused (nothing changed, by its contract) or unknown.
     *
     * @param noLeader unknown because no leader took it ({@code ClusterUnavailableException})
     * @param retry    the call repeated one whose outcome was unknown, which may have taken effect
     */
    private record Outcome(String kind, String message, boolean noLeader, boolean retry) {
        boolean refused() {
            return "refused".equals(kind);
        }

        boolean unknown() {
            return "unknown".equals(kind);
        }

        @Override
        public String toString() {
            String text = switch (kind) {
                case "refused" -> "refused: " + message;
                case "unknown" -> "outcome unknown (" + message + ")";
                default -> kind;
            };
            return retry ? text + ", when asked again" : text;
        }
    }

    /**
     * Makes a change. When no leader took it ({@code ClusterAdmin} gives up after a round or two of the
     * nodes, and an election after a kill may take longer), or when it stopped half way ({@code begun} but
     * not {@code done}: some groups have it, whatever the call answered), waits for the configuration to
     * settle and, unless it shows the change done after all, asks again, as an operator would: up to
     * {@link #RETRIES} times.
     */
    private Outcome change(ClusterAdmin admin, Runnable call, Predicate<SettledConfiguration> done,
                           Predicate<SettledConfiguration> begun) throws IOException {
        Outcome outcome = call(call, false);
        for (int retry = 0; retry < RETRIES && !"done".equals(outcome.kind()); retry++) {
            Optional<SettledConfiguration> view = SettledConfiguration.read(admin, SETTLE);
            if (view.isEmpty() || done.test(view.get()) || !(outcome.noLeader() || begun.test(view.get()))) {
                break;
            }
            if (begun.test(view.get())) {
                note("half done, asked again: " + outcome + "; " + view.get());
            }
            outcome = call(call, true);
        }
        return outcome;
    }

    private Outcome call(Runnable change, boolean retry) {
        try {
            change.run();
            return new Outcome("done", null, false, retry);
        } catch (AdminRefusedException e) {
            return new Outcome("refused", e.getMessage(), false, retry);
        } catch (RatchetException e) {
            // No leader took it, or it was handed to Raft and not answered: the settled configuration tells.
            count("unknown");
            String message = e.getClass().getSimpleName() + ": " + e.getMessage();
            return new Outcome("unknown", message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE) + "...",
                    e instanceof ClusterUnavailableException, retry);
        }
    }

    /**
     * A change the settled configuration shows done; a refusal for it breaks the refusal's promise, unless
     * it refused a second request for what an unanswered first one had done.
     */
    private void done(String counter, Outcome outcome, String what) {
        count(counter);
        if (outcome.refused() && !outcome.retry()) {
            count("refused_but_done");
            note("REFUSED BUT DONE: " + what + " was refused (" + outcome.message()
                    + ") yet the settled configuration shows it done");
        }
    }

    private synchronized void count(String counter) {
        changes.merge(counter, 1, Integer::sum);
    }

    private synchronized void note(String line) {
        notes.add(line);
    }

    /**
     * The membership check of the run: the voters changed only through this nemesis' own changes (see
     * {@link ConfigurationCheck}).
     */
    public synchronized CheckResult check() {
        return check.result(String.format(Locale.ROOT, "%d changes done, %d refused",
                changes.get("added") + changes.get("removed") + changes.get("transferred"), changes.get("refused")));
    }

    /**
     * Changes carried out and not: {@code added}, {@code removed}, {@code transferred}; {@code refused}
     * (nothing changed); {@code unknown} (calls without a known outcome, each then read from the
     * configuration); {@code refused_but_done} (a refusal the configuration contradicts: should stay 0).
     */
    public synchronized Map<String, Integer> changes() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(changes));
    }

    @Override
    public synchronized List<String> notes() {
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "membership changes: %d added, %d removed, %d leader transfers; "
                        + "%d refused (nothing changed); %d calls without a known outcome, each read back from the configuration",
                changes.get("added"), changes.get("removed"), changes.get("transferred"), changes.get("refused"),
                changes.get("unknown")));
        lines.addAll(notes);
        lines.addAll(check.lines());
        return lines;
    }

    /**
     * Nothing to undo: every change is meant to last, and the run settles with the members it has. Compares
     * the configuration once more, after the last kill has healed.
     */
    @Override
    public void healAll() throws IOException {
        try (ClusterAdmin admin = cluster.openAdmin()) {
            Optional<SettledConfiguration> end = SettledConfiguration.read(admin, SETTLE);
            if (end.isPresent() && !end.get().agreed()) {
                try {
                    note("at the end of the run: " + finish(admin, end.get()).description());
                } catch (FaultRefused e) {
                    note("at the end of the run: " + e.getMessage());
                }
                end = SettledConfiguration.read(admin, SETTLE);
            }
            if (end.isPresent()) {
                check.compare(end.get(), check.voters(), null, null, "at the end of the run");
            }
        }
    }
}
