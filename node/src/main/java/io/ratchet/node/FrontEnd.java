package io.ratchet.node;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.ratchet.common.Failures;
import io.ratchet.common.GroupCommit;
import io.ratchet.node.security.Authorizer;
import io.ratchet.node.security.TokenInterceptor;
import io.ratchet.protocol.Batch;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.Command;
import io.ratchet.protocol.Groups;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.InvalidCommandException;
import io.ratchet.protocol.Limits;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.RaftBytes;
import io.ratchet.protocol.Refusal;
import io.ratchet.protocol.Request;
import io.ratchet.protocol.Result;
import io.ratchet.protocol.Rpc;
import io.ratchet.statemachine.CompareExchangeStore;
import io.ratchet.statemachine.RatchetStateMachine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.ServerNotReadyException;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.protocol.exceptions.TransferLeadershipException;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.impl.HeartbeatNudge;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's front end: Ratchet's own gRPC service ({@link Rpc}), served on the node's client port
 * beside Ratis' services, which clients talk to instead of Ratis' client protocol.
 *
 * <p>Writes. On the leader, the batches waiting from every connection are joined into one proposal and
 * so one log entry ({@link #BATCHES}), submitted to the local Ratis server in-process; each
 * caller gets its own results. A follower does not forward: it refuses with {@link Refusal.Reason#NOT_LEADER}
 * and names the leader, and the client sends there itself (one hop, not two; see docs/DESIGN.md). A
 * write whose every condition names an index its key has left behind cannot land in any entry: it is
 * answered from a linearizable read instead ({@link #refuseBeforeLog}), as it arrives or as it leaves
 * the queue behind the entry that replaced its index.
 *
 * <p>Reads. Gets from every connection share one read message and one ReadIndex (or leader-lease
 * check); other queries and watches go to Ratis' read path one by one. Any node serves them: a
 * follower's ReadIndex asks the leader. Stale reads are answered from this node's state at once.
 *
 * <p>Groups. On a cluster of several Raft groups ({@link Groups}) each call names its group (a frame's
 * {@link Rpc#IN_GROUP}; group 0 otherwise), every key it names must be that group's, and each group has
 * its own group commits: an entry holds one group's writes. The cluster's shape ({@link Query.Shape}) is
 * answered here, from this node's view of each group's leader.
 *
 * <p>Bad input. Every message is decoded and validated before anything is queued; one that does not
 * parse or is invalid gets a {@link Refusal.Reason#INVALID} answer naming what is wrong, and nothing is
 * written. No input reaches the log that the state machine would refuse.
 */
final class FrontEnd implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FrontEnd.class);

    /** One per Raft group of the cluster ({@link Groups}), in group order. */
    private final List<Group> groups;
    /**
     * Submissions to Ratis run here, never on the thread that completed the last one: that thread is
     * often Ratis' own (the state machine updater completes reads), and Ratis' submit blocks its caller
     * until its client executor takes the request, which can wait on that very thread. One thread each
     * keeps proposals, and reads, in the order the group commits send them.
     */
    private final ExecutorService proposing = Executors.newSingleThreadExecutor(DaemonThreads.named("ratchet-front-end-propose"));
    private final ExecutorService reading = Executors.newSingleThreadExecutor(DaemonThreads.named("ratchet-front-end-read"));
    /** Stale reads, each answered from this node's store on a thread of this pool (as many as are running). */
    private final ExecutorService staleReading = Executors.newCachedThreadPool(DaemonThreads.named("ratchet-front-end-stale-read"));
    /** Looks at a follower's pending linearizable reads while they wait on the leader ({@link #guardedRead}). */
    private final ScheduledExecutorService readGuard =
            Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("ratchet-front-end-read-guard"));
    /**
     * A client's batch as it came, decoded and validated once, forwarded in the bytes it arrived in;
     * with its conditional writes ({@link CompareExchangeStore#conditionalWrites}: empty for most), which
     * may still be refused before the log when it leaves the queue while {@code withdrawable}.
     */
    private record Checked(Batch decoded, List<Command.Op> writes, byte[] encoded, int commands, boolean withdrawable) {
        Checked toLog() {
            return new Checked(decoded, writes, encoded, commands, false);
        }
    }

    /**
     * Client batches: one batches message, one log entry for many clients. An entry may hold several
     * clients' full messages; the byte bound keeps it well inside Ratis' buffers.
     */
    private static final GroupCommit.Format<Checked> BATCHES = new GroupCommit.Format<>(Checked::encoded,
            Codec::joinBatches, Checked::commands, Codec.BATCHES_FRAMING_BYTES, 4 * Limits.MAX_COMMANDS_PER_REQUEST);

    /**
     * The writes' hold: up to a whole round, at most 10 ms ({@code ratchet.frontEnd.maxHoldMicros}; 0 turns
     * it off). A client's quarter of a round (a thread's next request follows its answer at once) is too
     * short here: an entry's answers reach its many client processes one by one, and their next requests
     * come back spread over most of a round, so with a quarter an entry left with about half of them and
     * the rest waited a round (8.5 writes an entry at 16 instances; up to a round, 14-15). The hold ends as
     * soon as as many commands are queued as the last entry carried, so a full cluster does not wait it out.
     */
    static final GroupCommit.Hold WRITE_HOLD = new GroupCommit.Hold(
            TimeUnit.MICROSECONDS.toNanos(Long.getLong("ratchet.frontEnd.maxHoldMicros", 10_000)), 1);

    /**
     * What the front end keeps for one Raft group: its way into the local server, the group commits of its
     * writes and gets, and its state machine once the server has started.
     */
    private final class Group {
        final int index;
        final RaftGroupId id;
        final LocalSubmitter local;
        final GroupCommit<Checked> writes;
        final GroupCommit<Query.Get> gets;
        /** The group's state machine, once attached: asked whether a write can fit (see {@link #write}). */
        volatile RatchetStateMachine machine;

        Group(int index, RaftGroupId id) {
            this.index = index;
            this.id = id;
            this.local = new LocalSubmitter(id);
            // A write queued behind the entry that replaced the index it names goes no further (see refuseBeforeLog).
            this.writes = new GroupCommit<>(BATCHES, batches -> propose(this, batches),
                    Integer.getInteger("ratchet.frontEnd.entriesInFlight", 1), WRITE_HOLD,
                    checked -> !checked.withdrawable() || checked.writes().isEmpty() || !machine.replaced(checked.writes()));
            this.gets = new GroupCommit<>(GroupCommit.GETS,
                    message -> guardedRead(this, message).thenApply(Codec::decodeResults),
                    Integer.getInteger("ratchet.frontEnd.readsInFlight", 1), GroupCommit.QUARTER_ROUND);
        }
    }

    /** Each write answered with results: from its arrival here to its answer (a Raft round, with the queue). */
    private final Timer rounds;
    /** Writes this front end refused for the quota, before the log. */
    private final Counter overQuota;
    /** Conditional writes this front end refused before the log, the index they name replaced already. */
    private final Counter refusedBeforeLog;
    /** Watches sent into the read path and not yet answered: they wait on this node for a change. */
    private final AtomicInteger watching = new AtomicInteger();
    /** Whether the caller may: checked on every message, before anything is queued. */
    private final Authorizer authorizer;
    private volatile RaftServer server;
    /**
     * How long a follower may go without hearing from its leader before it stops serving linearizable
     * reads ({@link #leaderLost}): Ratis' minimum election timeout, after which Ratis itself holds the
     * leader lost (its {@code FollowerState.isCurrentLeaderValid}). Set when the server is attached.
     */
    private volatile long leaderLostMillis = Long.MAX_VALUE;

    /** The free space of the disk under the store, against its floor. */
    private final DiskFloor disk;
    private final String nodeId;
    /** Which commands the group's members can apply: asked before a later release's command is proposed. */
    private final CommandSupport support;

    FrontEnd(String nodeId, List<RaftGroupId> groupIds, Timer rounds, Counter overQuota, Counter refusedBeforeLog,
             Authorizer authorizer, DiskFloor disk, CommandSupport support) {
        this.refusedBeforeLog = refusedBeforeLog;
        this.nodeId = nodeId;
        this.support = support;
        this.disk = disk;
        this.authorizer = authorizer;
        this.rounds = rounds;
        this.overQuota = overQuota;
        List<Group> all = new ArrayList<>(groupIds.size());
        for (int g = 0; g < groupIds.size(); g++) {
            all.add(new Group(g, groupIds.get(g)));
        }
        this.groups = List.copyOf(all);
    }

    /**
     * Whether the front end's calls are handled on the network thread that read them ({@code
     * ratchet.frontEnd.onNetworkThread}, on unless set to false). gRPC would otherwise hand every message to
     * its executor first: one more thread woken per message, which at many client instances is a message a
     * write. The handlers decode, check and queue, and answers are sent from whichever thread completes
     * them. The one wait among them is the state machine's read lock (at most one entry's apply), taken only
     * when the quota alarm is up, the leader's disk is at its floor, or a settle's keys are checked.
     * Submitting into Ratis, which can block, and answering a stale read from the store, which can take a
     * while, stay on the front end's own threads. Ratis' services and the admin and backup services (which
     * stream files) keep gRPC's executor.
     */
    static final boolean ON_NETWORK_THREAD = !"false".equals(System.getProperty("ratchet.frontEnd.onNetworkThread"));

    /** The executor a server call runs on: the caller's (network) thread for the front end's methods, else gRPC's. */
    static Executor callExecutor(ServerCall<?, ?> call, Metadata headers) {
        return Rpc.SERVICE.equals(call.getMethodDescriptor().getServiceName()) ? Runnable::run : null;
    }

    /** The gRPC service, for Ratis to add to its server before it starts. */
    ServerServiceDefinition service() {
        return ServerServiceDefinition.builder(Rpc.SERVICE)
                .addMethod(Rpc.WRITE, ServerCalls.asyncUnaryCall((message, answer) -> write(groups.get(0), message, answer)))
                .addMethod(Rpc.READ, ServerCalls.asyncUnaryCall((message, answer) -> read(groups.get(0), message, answer)))
                .addMethod(Rpc.STALE_READ, ServerCalls.asyncUnaryCall(
                        (message, answer) -> staleRead(groups.get(0), message, answer)))
                .addMethod(Rpc.CALLS, ServerCalls.asyncBidiStreamingCall(this::calls))
                .build();
    }

    /** Watches waiting on this node now, for its metrics. */
    int pendingWatches() {
        return watching.get();
    }

    /** Called once the Ratis server has started; until then every call is refused as unavailable. */
    void attach(RaftServer server) {
        for (Group g : groups) {
            try {
                // Before the server: a call that finds the server attached finds the machines too.
                g.machine = (RatchetStateMachine) server.getDivision(g.id).getStateMachine();
            } catch (IOException e) {
                throw new UncheckedIOException("node's Raft group " + g.index + " is not there after start", e);
            }
        }
        this.leaderLostMillis = RaftServerConfigKeys.Rpc.timeoutMin(server.getProperties()).toLong(TimeUnit.MILLISECONDS);
        this.server = server;
    }

    // ---- handlers

    /**
     * The {@code Calls} stream: each frame is handled as its unary method would, and its answer goes back
     * framed with its call id as soon as it is ready. A frame too short to carry a call id cannot be
     * answered, so it ends the stream with an error; the node goes on serving.
     */
    private StreamObserver<byte[]> calls(StreamObserver<byte[]> stream) {
        return new StreamObserver<>() {
            @Override
            public void onNext(byte[] frame) {
                Rpc.Call call = Rpc.Call.parse(frame);
                if (call == null) {
                    fail(stream, Status.INVALID_ARGUMENT.withDescription("a call frame is a call id, a method byte"
                            + " (and with it a group) and a message; got " + frame.length + " bytes"));
                    return;
                }
                StreamObserver<byte[]> answer = new FramedAnswer(stream, call.callId());
                if (call.group() >= groups.size()) {
                    refuse(answer, Refusal.invalid("the cluster has " + groups.size() + " group"
                            + (groups.size() == 1 ? "" : "s") + ", numbered from 0; there is no group " + call.group()));
                    return;
                }
                Group group = groups.get(call.group());
                switch (call.method()) {
                    case Rpc.WRITE_CALL -> write(group, call.message(), answer);
                    case Rpc.READ_CALL -> read(group, call.message(), answer);
                    case Rpc.STALE_READ_CALL -> staleRead(group, call.message(), answer);
                    default -> refuse(answer, Refusal.invalid("unknown call method " + call.method()));
                }
            }

            @Override
            public void onError(Throwable t) {
                // The client went away; answers still pending find the stream closed and are dropped.
            }

            @Override
            public void onCompleted() {
                synchronized (stream) {
                    stream.onCompleted();
                }
            }
        };
    }

    /** One call's answer on a {@code Calls} stream: framed with its id; answers from many threads take turns. */
    private record FramedAnswer(StreamObserver<byte[]> stream, long callId) implements StreamObserver<byte[]> {
        @Override
        public void onNext(byte[] answer) {
            byte[] framed = Rpc.answerFrame(callId, answer);
            synchronized (stream) {
                stream.onNext(framed);
            }
        }

        @Override
        public void onError(Throwable t) {
            LOG.debug("call {} failed", callId, t);
        }

        @Override
        public void onCompleted() {
            // One answer ends one call, not the stream.
        }
    }

    private static void fail(StreamObserver<byte[]> stream, Status status) {
        try {
            synchronized (stream) {
                stream.onError(status.asRuntimeException());
            }
        } catch (RuntimeException e) {
            LOG.debug("stream already closed", e);
        }
    }

    private void write(Group group, byte[] message, StreamObserver<byte[]> answer) {
        long arrived = System.nanoTime();
        Checked batch;
        Batch decoded;
        Command.Kind later;
        try {
            List<Batch> batches = Codec.decodeBatches(message);
            if (batches.size() != 1) {
                throw new InvalidCommandException("a write message carries one batch, not " + batches.size());
            }
            decoded = batches.get(0);
            decoded.validate();
            later = checkGroup(group, decoded);
            // One batch and nothing after it (the decoder refuses trailing bytes): the rest is its encoding.
            batch = new Checked(decoded, CompareExchangeStore.conditionalWrites(decoded), Arrays.copyOfRange(message, Codec.BATCHES_FRAMING_BYTES, message.length),
                    batches.get(0).commandCount(), true);
        } catch (InvalidCommandException e) {
            refuse(answer, Refusal.invalid(e.getMessage()));
            return;
        }
        Refusal notHere = leaderRefusal(group);
        if (notHere != null) {
            refuse(answer, notHere);
            return;
        }
        // On the leader, against its newest permission table: a user removed by an entry is refused from
        // the next message on, and a batch with one key the user may not write is refused whole.
        Refusal denied = authorizer.check(TokenInterceptor.current(), decoded, group.machine::heldKeys);
        if (denied != null) {
            refuse(answer, denied);
            return;
        }
        if (later == null) {
            admit(group, decoded, batch, answer, arrived);
            return;
        }
        // A command an earlier release cannot read enters the log only once every member has said it applies
        // it (CommandSupport): else that member's state would part from the others'. Refused whole, before the
        // log, as the quota's refusals are; the client sends its other requests of the message again alone.
        support.missing(later, group.id).whenComplete((why, error) -> {
            if (why == null && error == null) {
                admit(group, decoded, batch, answer, arrived);
            } else {
                String name = later.name().toLowerCase(java.util.Locale.ROOT);
                reply(answer, Codec.encodeResults(Collections.nCopies(decoded.commandCount(),
                        new Result.Unsupported(name, why != null ? why : String.valueOf(error)))));
            }
        });
    }

    /** A checked write the caller may make and every member can apply: refused for room, or proposed. */
    private void admit(Group group, Batch decoded, Checked batch, StreamObserver<byte[]> answer, long arrived) {
        // A full cluster answers what cannot fit without a log entry (as etcd refuses puts once its
        // space alarm is raised): a storm of refused writes then costs no fsync on any node.
        RatchetStateMachine machine = group.machine;
        List<Result> refused = machine.refusalsForQuota(decoded);
        if (refused == null && disk.low() && machine.grows(decoded)) {
            // The leader's disk is at its floor: what would add to the state is refused before the log (free
            // space differs from node to node, so apply cannot be the judge); deletes and writes in place pass.
            refused = Collections.nCopies(decoded.commandCount(), new Result.DiskFull(nodeId, disk.free(), disk.floor()));
        }
        if (refused != null) {
            overQuota.increment(refused.size());
            reply(answer, Codec.encodeResults(refused));
            return;
        }
        if (machine.replaced(batch.writes())) {
            refuseBeforeLog(group, batch, answer, arrived);
            return;
        }
        propose(group, batch, answer, arrived);
    }

    /**
     * A write whose every condition names an index already replaced (a contended key's loser coming back
     * with the index it read before the last winner): no entry in the log could ever apply it, so instead of
     * an entry (an fsync on a majority, a round) the leader reads each key linearizably, joined with every
     * other get under one read index or lease check, and answers with the item found, as apply would. What
     * the read finds decides: a condition that holds there, a resend its session has answered, or a session
     * gone, goes to the log after all (see docs/DESIGN.md, "Hot keys").
     */
    private void refuseBeforeLog(Group group, Checked batch, StreamObserver<byte[]> answer, long arrived) {
        List<CompletableFuture<List<Result>>> reads = batch.writes().stream().map(w -> group.gets.submit(new Query.Get(w.key()))).toList();
        CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).whenComplete((done, error) -> {
            if (error != null) {
                refuse(answer, refusalFor(group, error)); // nothing was proposed
                return;
            }
            List<Result> found = new ArrayList<>(reads.size());
            reads.forEach(r -> found.addAll(r.join()));
            List<Result> refused = group.machine.refusalsBeforeLog(batch.decoded(), batch.writes(), found);
            if (refused == null) {
                propose(group, batch.toLog(), answer, arrived);
                return;
            }
            refusedBeforeLog.increment(refused.size());
            reply(answer, Codec.encodeResults(refused));
        });
    }

    /** A write into the group's next entry; answered with its results once applied. */
    private void propose(Group group, Checked batch, StreamObserver<byte[]> answer, long arrived) {
        group.writes.submit(batch).whenComplete((results, error) -> {
            if (error instanceof GroupCommit.Withdrawn) {
                // Queued behind the entry that replaced the index it names.
                refuseBeforeLog(group, batch, answer, arrived);
            } else if (error != null) {
                // Ratis may have appended it before it failed (a leader stepping down fails what is pending).
                refuse(answer, refusalFor(group, error).afterSubmission());
            } else {
                reply(answer, Codec.encodeResults(results));
                rounds.record(System.nanoTime() - arrived, TimeUnit.NANOSECONDS);
            }
        });
    }

    private void read(Group group, byte[] message, StreamObserver<byte[]> answer) {
        Query query;
        try {
            query = Codec.decodeQuery(message);
            query.validate();
            checkGroup(group, query);
        } catch (InvalidCommandException e) {
            refuse(answer, Refusal.invalid(e.getMessage()));
            return;
        }
        Refusal lost = query.kind() == Query.Kind.SHAPE ? null : leaderLost(group);
        if (lost != null) {
            refuse(answer, lost);
            return;
        }
        // Checked once the read has passed its barrier (ReadIndex or the leader's lease), against the table
        // as of then: every permission change acknowledged before the read is applied here by that time,
        // even on a follower, so a removed user's token stops working for reads at once too.
        String token = TokenInterceptor.current();
        CompletableFuture<byte[]> results = switch (query.kind()) {
            case GETS -> together(group, (Query.Gets) query);
            case SHAPE -> CompletableFuture.completedFuture(Codec.encodeResults(List.of(shape())));
            case WATCH -> {
                CompletableFuture<byte[]> watched = read(group, message);
                watching.incrementAndGet();
                watched.whenComplete((bytes, error) -> watching.decrementAndGet());
                yield watched;
            }
            case GET, GET_ALL, LIST_ITEMS, STATS, GET_DOCUMENT, CONTENTION, AUTH_STATUS, TXN_STATUS -> guardedRead(group, message);
        };
        results.whenComplete((bytes, error) -> {
            Refusal denied = error == null ? authorizer.check(token, query) : null;
            if (error != null) {
                refuse(answer, refusalFor(group, error));
            } else if (denied != null) {
                refuse(answer, denied);
            } else {
                reply(answer, query instanceof Query.Shape ? bytes : withLeaderIfFollower(group, bytes));
            }
        });
    }

    /**
     * Refuses a write message sent to a group that does not hold its keys: the client routes by key
     * ({@link Groups}), so this is a client of another shape (or a bug), and applying it would put a key
     * in two groups. The permission table is the cluster's, kept in group 0 (the authorizer reads it there).
     * Returns, from the same pass over the commands, the first one that a release before {@link CommandSupport}
     * did not have (null when none is).
     */
    private Command.Kind checkGroup(Group group, Batch batch) {
        Command.Kind later = null;
        for (Request request : batch.requests()) {
            for (Command command : request.commands()) {
                switch (command.kind()) {
                    case PREPARE -> checkPrepare(group, (Command.Prepare) command);
                    // On one group nothing needs them, and a node of the release before groups would not read them.
                    case SETTLE, FENCE -> {
                        if (groups.size() == 1) {
                            throw new InvalidCommandException("a cluster of one group has no transactions across groups to "
                                    + (command.kind() == Command.Kind.FENCE ? "hold" : "settle"));
                        }
                    }
                    case AUTH_CHANGE -> {
                        if (group.index != 0) {
                            throw new InvalidCommandException("permissions are the cluster's, kept in group 0, not group " + group.index);
                        }
                    }
                    case PUT, DELETE, TRANSACTION, SWEEP, OPEN_SESSION, SET_QUOTA, ADD -> {
                    }
                }
                if (later == null && CommandSupport.LATER.contains(command.kind())) {
                    later = command.kind();
                }
                if (groups.size() > 1) { // on one, every key is group 0's
                    checkKeys(group, Groups.keys(command));
                }
            }
        }
        return later;
    }

    /** Refuses a prepare that names groups this cluster does not have, or not the group it was sent to. */
    private void checkPrepare(Group group, Command.Prepare p) {
        if (groups.size() == 1) {
            throw new InvalidCommandException("a cluster of one group has no transactions across groups: send a transaction");
        }
        for (int g : p.groups()) {
            if (g >= groups.size()) {
                throw new InvalidCommandException("a prepare names group " + g + " of a cluster of " + groups.size() + " groups");
            }
        }
        if (!p.groups().contains(group.index) || p.holdsRecord() != (p.primary() == group.index)) {
            throw new InvalidCommandException("a prepare sent to group " + group.index + " names groups " + p.groups()
                    + " with primary " + p.primary() + (p.holdsRecord() ? ", holding the record" : ""));
        }
    }

    /** As {@link #checkGroup(Group, Batch)}, for a read. */
    private void checkGroup(Group group, Query query) {
        if (groups.size() == 1) {
            return;
        }
        if (group.index != 0 && query.kind() == Query.Kind.AUTH_STATUS) {
            throw new InvalidCommandException("permissions are the cluster's, kept in group 0, not group " + group.index);
        }
        checkKeys(group, Groups.keys(query));
    }

    /** Refuses the first of {@code keys} that is not {@code group}'s (a request across groups has one). */
    private void checkKeys(Group group, List<String> keys) {
        for (String key : keys) {
            int g = Groups.of(key, groups.size());
            if (g != group.index) {
                throw new InvalidCommandException("key '" + key + "' is in group " + g + " of the cluster's " + groups.size()
                        + ", not group " + group.index + " (a client of a release before groups sends every call to group 0;"
                        + " one request goes to one group)");
            }
        }
    }

    /** The cluster's groups, each with its leader's client address as this node knows it ("" for none known). */
    private Result.Shape shape() {
        List<String> leaders = new ArrayList<>(groups.size());
        for (Group g : groups) {
            String leader = "";
            try {
                DivisionInfo info = division(g).getInfo();
                RaftPeerId id = info.getLeaderId();
                RaftPeer peer = id == null ? null : division(g).getRaftConf().getPeer(id);
                leader = peer == null ? "" : clientAddress(peer);
            } catch (IOException e) {
                // starting or stopping: the client finds the leader by asking
            }
            leaders.add(leader);
        }
        return new Result.Shape(leaders);
    }

    /**
     * Null when this node may take a linearizable read; else a refusal naming no leader. A follower serves
     * one by asking its leader for the read index (Ratis' ReadIndex), and when that leader is paused or cut
     * off the question waits out Ratis' request timeout (3 s) unanswered: the client's attempt here goes
     * unanswered too, the node counts as silent to it, and its next attempt waits twice as long. Reads
     * after a pause waited 2.5 to 3.1 s so in chaos runs, where writes after the same pauses (which a
     * follower refuses at once) came back within 1.4 s. So a follower that has heard nothing from its
     * leader for {@link #leaderLostMillis} (when Ratis itself holds the leader lost) refuses at once; the
     * client asks the next node after a short pause, until one follows a leader that answers. A leader
     * decides on its role alone: the role's proto, which names every follower, is built on followers only.
     */
    private Refusal leaderLost(Group group) {
        // A follower that knows no leader is refused by Ratis' own read path.
        RaftPeerId leader = followedLeader(group);
        return leader == null ? null : lostLeader(group, leader);
    }

    /**
     * A linearizable read, which on a follower waits for its leader's answer to Ratis' ReadIndex. A leader
     * paused or cut off just after a follower asked it (before the follower counts it lost) leaves the
     * question unanswered until Ratis' request timeout (3 s), and the group's next gets wait behind it on
     * this node, even once the node has become the new leader: chaos runs saw reads, and the writes the
     * leader refuses from a read, stall 1.7 to 3.1 s after a leader's pause while other writes went on
     * after 0.7 s. So while a follower's read is pending it is looked at every {@link #READ_GUARD_MILLIS}:
     * once this node follows another leader than the one it asked, or is no longer a follower, or has not
     * heard from its leader for {@link #leaderLostMillis}, the read is refused as having no leader (a read
     * has no effect to lose). The client asks again where a leader answers; Ratis' question is left to
     * end by itself.
     */
    private CompletableFuture<byte[]> guardedRead(Group group, byte[] query) {
        RaftPeerId asked = followedLeader(group);
        CompletableFuture<byte[]> read = read(group, query);
        if (asked != null) {
            guard(group, asked, read);
        }
        return read;
    }

    private static final long READ_GUARD_MILLIS = 100;

    /** Fails {@code pending} (Ratis' answer, when it comes, is then dropped) once the leader it waits on is gone. */
    private void guard(Group group, RaftPeerId asked, CompletableFuture<byte[]> pending) {
        if (pending.isDone()) {
            return;
        }
        try {
            readGuard.schedule(() -> {
                Refusal lost = pending.isDone() ? null : lostLeader(group, asked);
                if (lost != null) {
                    pending.completeExceptionally(new ReadAbandoned(lost));
                } else {
                    guard(group, asked, pending);
                }
            }, READ_GUARD_MILLIS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // The node is stopping: the read's own path ends it.
        }
    }

    /** The leader this node follows in {@code group}; null when it leads, stands, or knows no leader. */
    private RaftPeerId followedLeader(Group group) {
        try {
            DivisionInfo info = division(group).getInfo();
            return info.isFollower() ? info.getLeaderId() : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** Null while this node still follows {@code asked} and heard from it lately; else why a read waiting on it is given up. */
    private Refusal lostLeader(Group group, RaftPeerId asked) {
        try {
            DivisionInfo info = division(group).getInfo();
            long silentMillis = info.isFollower()
                    ? info.getRoleInfoProto().getFollowerInfo().getLeaderInfo().getLastRpcElapsedTimeMs() : 0;
            String why = ReadGuard.lost(self(), asked, info.isFollower(), info.getLeaderId(), silentMillis, leaderLostMillis);
            return why == null ? null : Refusal.noLeader(why);
        } catch (IOException e) {
            return null; // the read's own path reports a node that cannot serve
        }
    }

    /** A read given up while it waited on a leader that went away ({@link #guardedRead}). */
    private static final class ReadAbandoned extends RuntimeException {
        final transient Refusal refusal;

        ReadAbandoned(Refusal refusal) {
            super(refusal.message(), null, false, false);
            this.refusal = refusal;
        }
    }

    /**
     * A linearizable read's results as this node sends them: a follower adds the leader's address, so that
     * a client that only reads moves to the leader, where a read is one lease check instead of a ReadIndex
     * round between two nodes. It still got its answer here.
     */
    private byte[] withLeaderIfFollower(Group group, byte[] results) {
        try {
            DivisionInfo info = division(group).getInfo();
            RaftPeerId leader = info.getLeaderId();
            RaftPeer peer = info.isLeader() || leader == null ? null : division(group).getRaftConf().getPeer(leader);
            return peer == null ? results : Codec.withLeader(results, clientAddress(peer));
        } catch (IOException e) {
            return results;
        }
    }

    /** A client's gets, each queued with every other client's, answered together in the client's order. */
    private CompletableFuture<byte[]> together(Group group, Query.Gets batch) {
        List<CompletableFuture<List<Result>>> each = batch.gets().stream().map(group.gets::submit).toList();
        return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(done -> {
            List<Result> results = new ArrayList<>(each.size());
            each.forEach(f -> results.addAll(f.join()));
            return Codec.encodeResults(results);
        });
    }

    private void staleRead(Group group, byte[] message, StreamObserver<byte[]> answer) {
        Query query;
        try {
            query = Codec.decodeQuery(message);
            query.validate();
            checkGroup(group, query);
            if (query instanceof Query.Watch) {
                throw new InvalidCommandException("a watch is not a stale read");
            }
        } catch (InvalidCommandException e) {
            refuse(answer, Refusal.invalid(e.getMessage()));
            return;
        }
        Refusal denied = authorizer.check(TokenInterceptor.current(), query);
        if (denied != null) {
            refuse(answer, denied);
            return;
        }
        RaftServer.Division division;
        try {
            division = division(group);
        } catch (IOException e) {
            refuse(answer, Refusal.unavailable(e.getMessage()));
            return;
        }
        if (query instanceof Query.Shape) {
            reply(answer, Codec.encodeResults(List.of(shape())));
            return;
        }
        // Answered from this node's store at once, which for a page of large values takes a while: off the
        // network thread that read the call, whose other connections would wait meanwhile.
        CompletableFuture<Message> answered;
        try {
            answered = CompletableFuture.supplyAsync(() -> division.getStateMachine().query(RaftBytes.message(message)),
                    staleReading).thenCompose(f -> f);
        } catch (RejectedExecutionException e) {
            refuse(answer, Refusal.unavailable("node " + self() + " is stopping"));
            return;
        }
        answered.whenComplete((reply, error) -> {
            if (error != null) {
                refuse(answer, refusalFor(group, error));
            } else {
                reply(answer, reply.getContent().toByteArray());
            }
        });
    }

    // ---- the way into Ratis, in-process

    /** One proposal (the batches of one or many clients) to the local server: one log entry. */
    private CompletableFuture<List<Result>> propose(Group group, byte[] batches) {
        return submit(group, batches, RaftClientRequest.writeRequestType(), proposing).thenApply(Codec::decodeResults);
    }

    /**
     * One query through Ratis' linearizable read path: ReadIndex (a heartbeat round on the leader; a question
     * to the leader on a follower). On the leader, the heartbeat is asked for again while the read waits
     * ({@link #nudge}).
     */
    private CompletableFuture<byte[]> read(Group group, byte[] query) {
        CompletableFuture<byte[]> read = submit(group, query, RaftClientRequest.readRequestType(), reading);
        nudge(group, read, NUDGE_FIRST_MICROS);
        return read;
    }

    /** The first heartbeat nudge of a read on the leader, after this long; then twice as long each time. */
    private static final long NUDGE_FIRST_MICROS = 1_000;
    /** No nudge after this: Ratis' periodic heartbeat (half the minimum election timeout) is due by then. */
    private static final long NUDGE_LAST_MICROS = 64_000;

    /**
     * While a read on the leader is unanswered, triggers its appenders' heartbeats again, after 1, 2, 4 ... 64
     * ms: Ratis 3.3.0 can lose the trigger a read sets to an append sent just then, and the read would wait
     * for the next entry or the periodic heartbeat ({@link HeartbeatNudge}). A read that has its round sooner
     * costs one timer; a watch, which waits by design, at most seven heartbeats.
     */
    private void nudge(Group group, CompletableFuture<byte[]> pending, long afterMicros) {
        if (pending.isDone() || afterMicros > NUDGE_LAST_MICROS) {
            return;
        }
        try {
            readGuard.schedule(() -> {
                if (pending.isDone()) {
                    return;
                }
                try {
                    if (HeartbeatNudge.nudge(division(group))) {
                        nudge(group, pending, afterMicros * 2);
                    }
                } catch (IOException e) {
                    // The read's own path reports a node that cannot serve.
                }
            }, afterMicros, TimeUnit.MICROSECONDS);
        } catch (RejectedExecutionException e) {
            // The node is stopping: the read's own path ends it.
        }
    }

    private CompletableFuture<byte[]> submit(Group group, byte[] message, RaftClientRequest.Type type, ExecutorService executor) {
        try {
            return CompletableFuture.supplyAsync(() -> submitHere(group, message, type), executor).thenCompose(f -> f);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.failedFuture(new ServerNotReadyException("the node is stopping"));
        }
    }

    private CompletableFuture<byte[]> submitHere(Group group, byte[] message, RaftClientRequest.Type type) {
        RaftServer s = server;
        return s == null ? CompletableFuture.failedFuture(new ServerNotReadyException("the node is starting"))
                : group.local.submit(s, message, type);
    }

    // ---- refusals

    /** Null when this node is the leader and ready; else where the client should go. */
    private Refusal leaderRefusal(Group group) {
        try {
            RaftServer.Division division = division(group);
            DivisionInfo info = division.getInfo();
            if (!info.isAlive()) {
                // Removed from the group (Ratis closes a leader's division once the configuration without it
                // commits), or stopping. A closed division still calls itself the leader, not ready, and a
                // client told so comes back here: it must hear that this node serves the group no more.
                return Refusal.noLeader("node " + self() + " no longer serves group " + group.index
                        + " (" + info.getLifeCycleState() + ")");
            }
            if (info.isLeader()) {
                // Named, so that the client asks this node again rather than moving on to another, which
                // would only send it back here (or to a node that is down).
                return info.isLeaderReady() ? null
                        : Refusal.leaderNotReady(self(), clientAddress(division.getPeer()));
            }
            return notLeader(group, info.getLeaderId());
        } catch (IOException e) {
            return Refusal.unavailable(e.getMessage());
        }
    }

    private Refusal notLeader(Group group, RaftPeerId leader) throws IOException {
        if (leader == null) {
            return Refusal.noLeader("no leader is known to node " + self() + " yet");
        }
        RaftPeer peer = division(group).getRaftConf().getPeer(leader);
        if (peer == null) {
            return Refusal.noLeader("leader " + leader + " is not in node " + self() + "'s configuration");
        }
        return Refusal.notLeader(leader.toString(), clientAddress(peer));
    }

    private static String clientAddress(RaftPeer peer) {
        String client = peer.getClientAddress();
        return client != null && !client.isEmpty() ? client : peer.getAddress();
    }

    /**
     * What a failure inside Ratis means for the client. Every refusal Ratis gives before it appends is
     * typed; anything else may have left an entry behind, and the client's session makes its resend safe.
     */
    private Refusal refusalFor(Group group, Throwable error) {
        Throwable cause = Failures.unwrap(error);
        if (cause instanceof ReadAbandoned abandoned) {
            return abandoned.refusal;
        }
        if (cause instanceof InvalidCommandException e) {
            return Refusal.invalid(e.getMessage());
        }
        if (cause instanceof StateMachineException && cause.getCause() instanceof InvalidCommandException e) {
            return Refusal.invalid(e.getMessage());
        }
        if (cause instanceof NotLeaderException e) {
            try {
                RaftPeer suggested = e.getSuggestedLeader();
                return suggested == null ? Refusal.noLeader("node " + self() + " lost leadership")
                        : notLeader(group, suggested.getId());
            } catch (IOException io) {
                return Refusal.unavailable(io.getMessage());
            }
        }
        if (cause instanceof LeaderNotReadyException || cause instanceof LeaderSteppingDownException
                || cause instanceof TransferLeadershipException || cause instanceof ServerNotReadyException) {
            return Refusal.noLeader(cause.getClass().getSimpleName() + ": " + cause.getMessage());
        }
        LOG.debug("front end request failed", cause);
        return Refusal.unavailable(cause.getClass().getSimpleName() + ": " + cause.getMessage());
    }

    /** This node's id, for messages; the server may be gone by the time a late failure is reported. */
    private String self() {
        RaftServer s = server;
        return s == null ? "(stopped)" : s.getId().toString();
    }

    private RaftServer.Division division(Group group) throws IOException {
        RaftServer s = server;
        if (s == null) {
            throw new ServerNotReadyException("the node is starting");
        }
        return s.getDivision(group.id);
    }

    private static void refuse(StreamObserver<byte[]> answer, Refusal refusal) {
        reply(answer, Codec.encodeRefusal(refusal));
    }

    private static void reply(StreamObserver<byte[]> answer, byte[] bytes) {
        try {
            answer.onNext(bytes);
            answer.onCompleted();
        } catch (RuntimeException e) {
            // The caller went away (cancelled, timed out, disconnected): nobody is left to tell.
            LOG.debug("answer not delivered", e);
        }
    }


    @Override
    public void close() {
        server = null;
        proposing.shutdownNow();
        reading.shutdownNow();
        staleReading.shutdownNow();
        readGuard.shutdownNow();
    }
}
