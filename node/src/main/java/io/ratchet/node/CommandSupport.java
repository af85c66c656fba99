package io.ratchet.node;

import io.ratchet.common.Credentials;
import io.ratchet.common.NodeChannels;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.ReleaseRpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ConnectivityState;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which commands the other members of this node's groups can apply, as each told it ({@link ReleaseRpc}):
 * how the leader keeps out of the log a command that a node of an earlier release would not read, during
 * a rolling upgrade. Such a node would refuse the entry in apply while the others applied it, and its
 * state would part from theirs for good (docs/DESIGN.md, "Versions and upgrades").
 *
 * <p>A command that every release applies passes at once. One added later ({@link #LATER}) passes only when
 * every member of the group (voters and listeners, of the configuration and of one being changed to) has
 * said that its release applies it. A member that answers {@code UNIMPLEMENTED} runs a release before the
 * question, which applies none of them. What each member said is kept for this node's life and asked again
 * every {@link #PERIOD} ({@link #SOON} while one is unheard, and at once when a command needs a member not
 * yet heard from), so a member that is down keeps its last answer: a voter down does not stop adds once it
 * has been heard from. A node that starts while a member is down refuses them, when it leads, until it
 * hears from that member: what it cannot know it does not assume.
 *
 * <p>Also serves the question: this node's answer is every command of this build.
 */
final class CommandSupport implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CommandSupport.class);
    /** The commands a release before {@link ReleaseRpc} did not have: the rest every release applies. */
    static final Set<Command.Kind> LATER = EnumSet.of(Command.Kind.ADD);
    static final Duration PERIOD = Duration.ofSeconds(5);
    /** How soon a round follows one that left a member unheard. */
    static final Duration SOON = Duration.ofMillis(500);
    private static final long ASK_MILLIS = 1_000;

    private final String selfId;
    private final Credentials credentials;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-command-support"));
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    /** What each member (by id and address) said it applies; absent: not heard from yet. */
    private final Map<String, Set<Command.Kind>> heard = new ConcurrentHashMap<>();
    /** Questions in flight, by member: a command waiting on a member joins the one asked. */
    private final Map<String, CompletableFuture<Void>> asking = new ConcurrentHashMap<>();
    private volatile RaftServer server;
    private volatile List<RaftGroupId> groupIds = List.of();
    /** What this node answers; every command of its build, unless a test makes it answer as a release before. */
    private volatile boolean earlierRelease;
    private volatile boolean closed;

    CommandSupport(String selfId, Credentials credentials) {
        this.selfId = selfId;
        this.credentials = credentials;
    }

    /** The {@link ReleaseRpc} service: the commands this node's release applies. */
    ServerServiceDefinition service() {
        return ServerServiceDefinition.builder(ReleaseRpc.SERVICE)
                .addMethod(ReleaseRpc.COMMANDS, ServerCalls.asyncUnaryCall((byte[] request, StreamObserver<byte[]> observer) -> {
                    if (earlierRelease) {
                        observer.onError(Status.UNIMPLEMENTED.withDescription("as a release before the question").asRuntimeException());
                        return;
                    }
                    observer.onNext(ReleaseRpc.encode(EnumSet.allOf(Command.Kind.class)));
                    observer.onCompleted();
                }))
                .build();
    }

    /** Starts asking the members of {@code groups}, once the server has started. */
    void attach(RaftServer server, List<RaftGroupId> groups) {
        this.server = server;
        this.groupIds = List.copyOf(groups);
        timer.execute(this::round);
    }

    /**
     * One round of questions, and the next: in {@link #PERIOD}, or in {@link #SOON} while a member has not
     * been heard from (at a cluster's start its nodes come up one by one), so that every node knows the others
     * well before it may have to lead with one of them down.
     */
    private void round() {
        askAll().whenComplete((done, e) -> {
            boolean allHeard = heardAll();
            try {
                timer.schedule(this::round, (allHeard ? PERIOD : SOON).toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException closed) {
                // closed meanwhile
            }
        });
    }

    private boolean heardAll() {
        for (RaftGroupId id : groupIds) {
            try {
                for (RaftPeer member : members(id)) {
                    if (!heard.containsKey(name(member))) {
                        return false;
                    }
                }
            } catch (Exception e) {
                return false;
            }
        }
        return true;
    }

    /**
     * Null when every member of {@code group} applies {@code kind}; else, once the members not heard from
     * yet have been asked (twice: a question in flight may have been sent before the member was up), why
     * not, naming a member. Completes at once when all are known, within two seconds otherwise.
     */
    CompletableFuture<String> missing(Command.Kind kind, RaftGroupId group) {
        if (!LATER.contains(kind)) {
            return CompletableFuture.completedFuture(null);
        }
        List<RaftPeer> members;
        try {
            members = members(group);
        } catch (Exception e) {
            return CompletableFuture.completedFuture("this node does not know the group's members yet");
        }
        CompletableFuture<Void> first = askUnheard(members);
        if (first.isDone()) {
            return CompletableFuture.completedFuture(lacking(kind, members));
        }
        return first.thenCompose(done -> askUnheard(members)).handle((done, e) -> lacking(kind, members));
    }

    /** Asks those of {@code members} not heard from yet; done at once when there are none. */
    private CompletableFuture<Void> askUnheard(List<RaftPeer> members) {
        List<CompletableFuture<Void>> unheard = new ArrayList<>();
        for (RaftPeer member : members) {
            if (!heard.containsKey(name(member))) {
                unheard.add(ask(member));
            }
        }
        return CompletableFuture.allOf(unheard.toArray(CompletableFuture[]::new));
    }

    /**
     * As {@link #missing}, from what is known now, asking nobody: a member not heard from counts as one that
     * cannot. What the state machine asks of every proposal ({@code RatchetStateMachine.checkProposals}).
     */
    String lackingNow(Command.Kind kind, RaftGroupId group) {
        if (!LATER.contains(kind)) {
            return null;
        }
        try {
            return lacking(kind, members(group));
        } catch (Exception e) {
            return "this node does not know the group's members yet";
        }
    }

    /** Why not every one of {@code members} is known to apply {@code kind}; null when each is. */
    private String lacking(Command.Kind kind, List<RaftPeer> members) {
        for (RaftPeer member : members) {
            Set<Command.Kind> applies = heard.get(name(member));
            if (applies == null) {
                return "member " + member.getId() + " (" + member.getAddress() + ") has not said which commands its release"
                        + " applies (it did not answer); it is asked again every " + PERIOD.toSeconds() + " s";
            }
            if (!applies.contains(kind)) {
                return "member " + member.getId() + " (" + member.getAddress() + ") runs a release without "
                        + kind.name().toLowerCase(Locale.ROOT) + "; upgrade every node first";
            }
        }
        return null;
    }

    /** The members of {@code group} other than this node: voters and listeners, of either configuration while one changes. */
    private List<RaftPeer> members(RaftGroupId group) throws Exception {
        if (server == null) {
            throw new IllegalStateException("not started");
        }
        var conf = server.getDivision(group).getRaftConf();
        Set<RaftPeer> all = new LinkedHashSet<>(conf.getAllPeers(RaftPeerRole.FOLLOWER));
        all.addAll(conf.getAllPeers(RaftPeerRole.LISTENER));
        all.removeIf(peer -> peer.getId().toString().equals(selfId));
        return List.copyOf(all);
    }

    private static String name(RaftPeer peer) {
        return peer.getId() + "@" + peer.getAddress();
    }

    /** Asks every member of every group now; completes when each has answered or given up. */
    CompletableFuture<Void> askAll() {
        if (server == null) {
            return CompletableFuture.completedFuture(null);
        }
        Set<RaftPeer> all = new LinkedHashSet<>();
        for (RaftGroupId id : groupIds) {
            try {
                all.addAll(members(id));
            } catch (Exception e) {
                LOG.debug("no members of group {} to ask yet", id, e);
            }
        }
        return CompletableFuture.allOf(all.stream().map(this::ask).toArray(CompletableFuture[]::new));
    }

    /** Asks {@code member} which commands it applies, unless a question to it is in flight already (then joins it). */
    private CompletableFuture<Void> ask(RaftPeer member) {
        String name = name(member);
        if (closed) {
            return CompletableFuture.completedFuture(null); // no channel opened that nothing would close
        }
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> inFlight = asking.putIfAbsent(name, mine);
        if (inFlight != null) {
            return inFlight;
        }
        try {
            ManagedChannel channel = channels.computeIfAbsent(member.getAddress(), a -> NodeChannels.open(a, credentials));
            if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
                // A member that was down (or not yet up, as at a cluster's start) is tried now, not after gRPC's backoff.
                channel.resetConnectBackoff();
            }
            // Waits for the connection within the deadline, rather than failing at once while it is made.
            ClientCalls.asyncUnaryCall(channel.newCall(ReleaseRpc.COMMANDS, CallOptions.DEFAULT.withWaitForReady()
                    .withDeadlineAfter(ASK_MILLIS, TimeUnit.MILLISECONDS)), new byte[0], new StreamObserver<>() {
                        @Override
                        public void onNext(byte[] answer) {
                            heard.put(name, ReleaseRpc.decode(answer));
                        }

                        @Override
                        public void onError(Throwable t) {
                            if (t instanceof StatusRuntimeException s && s.getStatus().getCode() == Status.Code.UNIMPLEMENTED) {
                                // A release before the question: it applies none of the later commands.
                                heard.put(name, EnumSet.complementOf(EnumSet.copyOf(LATER)));
                            } else { // down or slow: what it said before stands
                                LOG.debug("{} did not say which commands it applies: {}", name, t.toString());
                            }
                            done(name, mine);
                        }

                        @Override
                        public void onCompleted() {
                            done(name, mine);
                        }
                    });
        } catch (RuntimeException e) {
            LOG.debug("cannot ask {} which commands it applies", name, e);
            done(name, mine);
        }
        return mine;
    }

    private void done(String name, CompletableFuture<Void> question) {
        asking.remove(name, question);
        question.complete(null);
    }

    /** For tests: this node answers as a node of a release before the question does ({@code UNIMPLEMENTED}), or as itself. */
    void answerAsEarlierRelease(boolean earlier) {
        this.earlierRelease = earlier;
    }

    @Override
    public void close() {
        closed = true;
        timer.shutdownNow();
        channels.values().forEach(ManagedChannel::shutdownNow);
    }
}
