package io.ratchet.node;

import io.ratchet.protocol.DaemonThreads;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spreads a cluster's group leaders over its nodes ({@link io.ratchet.protocol.Groups}): elections put
 * them anywhere, and a node that comes back after a failure leads nothing until something moves. Every
 * round, a node hands one group to the voter that leads the fewest, when it leads at least two more than
 * that voter, among the group's voters that
 * <ul>
 * <li>hold every committed entry (a node back from a restart leads nothing yet but may still be catching
 *     up: handed a group then, it would keep the group's writes refused until it caught up, up to the
 *     transfer's {@link HandOver#TRANSFER_MILLIS}),
 * <li>have answered within a second at every look (once a second) for the last {@link #steady()}: a node
 *     that was down, paused or cut off a moment ago is not handed a group. In the chaos runs a node handed
 *     a group 10-20 s after its restart, caught up in that group but not yet in the others and with its
 *     JVM still compiling, took up to 1.7 s to commit as the new leader, and every workload of the group
 *     waited (the run's worst gaps, 2.7 and 3.1 s),
 * <li>and are not starved of CPU;
 * </ul>
 * and only while every voter of the group answers and none was starved of CPU at any answer to this node's
 * pace questions in the last {@link #steady()}: during a fault (a voter down, paused, cut off, slow) a
 * hand-over would have the group's writes wait on the voters left, and a node under a CPU quota that has
 * just handed its groups away does less and may answer a moment later that it runs freely (in a soak, a
 * group was handed to a node while another was starved, and to the starved one when it had shed its groups,
 * and each time the new leader was slow and handed the group on within 2.5 s). Each node judges from its own
 * view of every group's leader (it is a member of all of them), and moves one group a round, so the
 * spread settles in a few rounds, to counts that differ by one at most, and no group is handed back and
 * forth: after a move the giver still leads at least as many as the taker. A round in which some group
 * has no known leader (an election) moves nothing.
 */
final class LeaderBalancer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderBalancer.class);
    /** How often a node looks: {@code ratchet.balance.intervalMillis}, 5 s unless set when the node starts. */
    static Duration interval() {
        return Duration.ofMillis(Long.getLong("ratchet.balance.intervalMillis", 5_000));
    }

    /**
     * How long a voter must have answered at every look before it is handed a group:
     * {@code ratchet.balance.steadyMillis}, 30 s unless set when the node starts.
     */
    static Duration steady() {
        return Duration.ofMillis(Long.getLong("ratchet.balance.steadyMillis", 30_000));
    }
    /** How often a node looks at its followers, to tell a steady one from one that was away. */
    private static final Duration LOOK = Duration.ofSeconds(1);
    private static final long HEARD_WITHIN_MILLIS = 1_000;

    private final RaftServer server;
    private final List<RaftGroupId> groups;
    /** Asks a candidate how starved of CPU it is; null: nobody is asked (a test without the service). */
    private final PaceAsker pace;
    private final double slowShare;
    private final List<HandOver> handOvers = new ArrayList<>();
    private final Steadiness steadiness;
    private final ScheduledExecutorService timer =
            Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-leader-balancer"));

    /**
     * @param pace      asks a candidate its stalled share before it is handed a group; null asks nobody
     * @param slowShare a candidate at or over this share is passed over (the slow-leader watch's threshold;
     *                  0 passes over nobody)
     */
    LeaderBalancer(RaftServer server, List<RaftGroupId> groups, Duration interval, Duration steady, PaceAsker pace,
                   double slowShare) {
        this.server = server;
        this.steadiness = new Steadiness(steady);
        this.groups = List.copyOf(groups);
        this.pace = pace;
        this.slowShare = slowShare;
        groups.forEach(id -> handOvers.add(new HandOver(server, id)));
        // One thread: the looks and the rounds never run at once.
        timer.scheduleWithFixedDelay(this::lookOnce, 0, LOOK.toMillis(), TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(this::balanceOnce, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Notes which followers of the groups this node leads answered within the last second. */
    void lookOnce() {
        long now = System.nanoTime();
        for (RaftGroupId id : groups) {
            try {
                steadiness.look(id, HandOver.heard(HandOver.voters(server.getDivision(id)), HEARD_WITHIN_MILLIS), now);
            } catch (IOException e) {
                steadiness.look(id, List.of(), now);
            } catch (RuntimeException e) {
                LOG.debug("leader balance look at {} failed", id, e);
                steadiness.look(id, List.of(), now);
            }
        }
    }

    void balanceOnce() {
        try {
            List<RaftServer.Division> divisions = new ArrayList<>(groups.size());
            for (RaftGroupId id : groups) {
                divisions.add(server.getDivision(id));
            }
            Map<RaftPeerId, Integer> led = new HashMap<>();
            for (RaftPeer voter : divisions.get(0).getRaftConf().getCurrentPeers()) {
                led.put(voter.getId(), 0);
            }
            for (RaftServer.Division d : divisions) {
                RaftPeerId leader = d.getInfo().getLeaderId();
                if (leader == null) {
                    return;
                }
                led.merge(leader, 1, Integer::sum);
            }
            RaftPeerId self = server.getId();
            int mine = led.getOrDefault(self, 0);
            long now = System.nanoTime();
            for (int g = 0; g < divisions.size(); g++) {
                RaftServer.Division d = divisions.get(g);
                RaftGroupId id = groups.get(g);
                if (aVoterWasStarved(d, now)) {
                    continue;
                }
                List<RaftPeerId> candidates = candidates(HandOver.voters(d), d.getRaftConf().getCurrentPeers().size() - 1,
                        d.getRaftLog().getLastCommittedIndex(), p -> steadiness.steady(id, p, now));
                RaftPeerId target = target(candidates, led, mine, p -> starved(d, p)).orElse(null);
                if (target != null) {
                    LOG.info("node {} leads {} of {} groups: it hands group {} to {}, which leads {}",
                            self, mine, groups.size(), g, target, led.get(target));
                    handOvers.get(g).to(target).get(30, TimeUnit.SECONDS);
                    return;
                }
            }
        } catch (IOException e) {
            LOG.debug("leader balance round: a group is not there (starting or stopping)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.debug("leader balance round failed", e);
        }
    }

    /**
     * The voters a group may be handed to: none while some voter has not answered within a second (a fault
     * is under way; {@code others} is how many voters besides the leader the group has), else those that
     * hold every entry up to {@code committed} and are {@code steady}, the furthest in the log first.
     */
    static List<RaftPeerId> candidates(List<HandOver.Follower> voters, int others, long committed, Predicate<RaftPeerId> steady) {
        if (voters.size() < others || voters.stream().anyMatch(f -> f.lastRpcElapsedMillis() >= HEARD_WITHIN_MILLIS)) {
            return List.of();
        }
        return HandOver.caughtUp(voters, HEARD_WITHIN_MILLIS, committed).stream().filter(steady).toList();
    }

    /**
     * The followers of each group this node leads that have answered at every look for at least a given
     * time. A follower missing from a look (not heard within a second) starts again; a group this node
     * does not lead at a look is forgotten, so a node that has just become leader waits the whole time
     * before it hands the group on. Times are {@link System#nanoTime} values.
     */
    static final class Steadiness {
        private final long steadyNanos;
        private final Map<RaftGroupId, Map<RaftPeerId, Long>> heardSince = new HashMap<>();

        Steadiness(Duration steady) {
            this.steadyNanos = steady.toNanos();
        }

        /** One look at group {@code id}: {@code heard} are the followers heard within the last second (none if this node does not lead it). */
        void look(RaftGroupId id, List<RaftPeerId> heard, long now) {
            if (heard.isEmpty()) {
                heardSince.remove(id);
                return;
            }
            Map<RaftPeerId, Long> since = heardSince.computeIfAbsent(id, g -> new HashMap<>());
            since.keySet().retainAll(heard);
            heard.forEach(p -> since.putIfAbsent(p, now));
        }

        /** The steady time before {@code now}, in {@link System#nanoTime} terms. */
        long since(long now) {
            return now - steadyNanos;
        }

        /** Whether {@code peer} has been heard at every look of group {@code id} since at least the steady time before {@code now}. */
        boolean steady(RaftGroupId id, RaftPeerId peer, long now) {
            Long since = heardSince.getOrDefault(id, Map.of()).get(peer);
            return since != null && now - since >= steadyNanos;
        }
    }

    /**
     * Of {@code voters} (caught up, recently heard), the one to hand a group to from a node that leads
     * {@code mine}: the one that leads the fewest, at least two fewer, and is not {@code starved}.
     */
    static Optional<RaftPeerId> target(List<RaftPeerId> voters, Map<RaftPeerId, Integer> led, int mine,
                                       Predicate<RaftPeerId> starved) {
        return voters.stream()
                .filter(p -> led.containsKey(p) && led.get(p) + 2 <= mine)
                .sorted(Comparator.comparingInt((RaftPeerId p) -> led.get(p)).thenComparing(RaftPeerId::toString))
                .filter(starved.negate())
                .findFirst();
    }

    /**
     * Whether a voter of {@code division} other than this node answered a pace question at or over the
     * slow-leader threshold within the steady time before {@code now}.
     */
    private boolean aVoterWasStarved(RaftServer.Division division, long now) {
        return pace != null && starvedVoter(division.getRaftConf().getCurrentPeers(), server.getId(),
                address -> pace.highestSince(address, steadiness.since(now)), slowShare).isPresent();
    }

    /**
     * The first of {@code voters} but {@code self} whose highest share lately ({@code highestLately}, by
     * address; empty when it was not asked) is at or over {@code slowShare}; none when {@code slowShare} is 0.
     */
    static Optional<RaftPeerId> starvedVoter(Collection<RaftPeer> voters, RaftPeerId self,
                                             Function<String, Optional<Double>> highestLately, double slowShare) {
        if (slowShare <= 0) {
            return Optional.empty();
        }
        return voters.stream().filter(v -> !v.getId().equals(self))
                .filter(v -> highestLately.apply(v.getAddress()).orElse(0.0) >= slowShare)
                .map(RaftPeer::getId).findFirst();
    }

    /**
     * Whether {@code candidate} is starved of CPU, or does not say within {@link PaceAsker#ASK_MILLIS}: a node
     * the slow-leader watch just handed its groups away from leads few, and would otherwise be handed them
     * back, each to be handed away again seconds later (seen in the chaos runs of the slow nemesis).
     */
    private boolean starved(RaftServer.Division division, RaftPeerId candidate) {
        if (pace == null || slowShare <= 0) {
            return false;
        }
        RaftPeer peer = division.getRaftConf().getPeer(candidate);
        try {
            double share = peer == null ? 1 : pace.stalledShareOf(peer.getAddress()).get(PaceAsker.ASK_MILLIS + 100, TimeUnit.MILLISECONDS);
            if (share >= slowShare) {
                LOG.info("node {} passes {} over for a group: it waited for CPU {}% of the last second",
                        server.getId(), candidate, Math.round(share * 100));
                return true;
            }
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        } catch (Exception e) {
            return true;
        }
    }

    /** Leaves {@code pace} open: it is the node's. */
    @Override
    public void close() {
        timer.shutdownNow();
    }
}
