package io.ratchet.node.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.common.Credentials;
import io.ratchet.common.Failures;
import io.ratchet.common.NodeChannels;
import io.ratchet.node.metrics.RaftState;
import io.ratchet.node.security.Authorizer;
import io.ratchet.node.security.TokenInterceptor;
import io.ratchet.protocol.AdminRpc;
import io.ratchet.common.Release;
import io.ratchet.protocol.Codec;
import io.ratchet.protocol.DaemonThreads;
import io.ratchet.protocol.Json;
import io.ratchet.protocol.Query;
import io.ratchet.protocol.RaftBytes;
import io.ratchet.protocol.Refusal;
import io.ratchet.protocol.Result;
import io.ratchet.statemachine.RatchetStateMachine;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's administration service ({@link AdminRpc}): what an operator asks of a node and of the
 * cluster, as JSON requests {@code {"op": ...}}.
 *
 * <ul>
 *   <li>{@code status}: this node's role, term, leader, log indexes, store size and quota, and the
 *       configuration as it knows it. Any node answers for itself; a node still starting answers
 *       {@code "role": "STARTING"}.</li>
 *   <li>{@code members.add} {@code {id, address}}, {@code members.remove} {@code {id}},
 *       {@code leader.transfer} {@code {id}}: changes the leader carries out ({@link Membership}). Any
 *       other node refuses with {@code not_leader}, naming the leader, and the client asks there. On a
 *       cluster of several groups, group 0's leader makes a membership change in every group, one after
 *       another, each at the group's leader, which it asks with {@code group} in the request (see
 *       {@link #everyGroup}).</li>
 * </ul>
 *
 * <p>An error is {@code {"error": CODE, "message": ...}}, CODE one of {@code invalid} (the request is
 * malformed), {@code refused} (the cluster's state does not allow it: nothing changed),
 * {@code not_leader} (with {@code leader: {id, address}}), {@code no_leader}, {@code unauthenticated} and
 * {@code forbidden} (authentication is on: no user, or not an administrator), {@code unavailable} (the
 * node is starting or stopping) and {@code unknown} (the change was handed to Raft and its outcome is
 * not known: read the membership before trying again).
 */
public final class AdminService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AdminService.class);

    private final RaftGroupId groupId;
    private final String nodeId;
    private final String address;
    /** Where calls that wait on another node (a joining node's answer) run, off gRPC's threads. */
    private final ExecutorService blocking = Executors.newCachedThreadPool(DaemonThreads.named("ratchet-admin"));
    /** Status for any user; changes for administrators only. */
    private final Authorizer authorizer;
    /** This node as a client of others (its certificate, with TLS). */
    private final Credentials self;
    private volatile RaftServer.Division division;
    private volatile Membership membership;
    /** Each group's membership changes, in group order, once attached (the first is {@link #membership}). */
    private volatile List<Membership> memberships = List.of();
    /** Every group's division, in group order, once attached. */
    private volatile List<RaftServer.Division> divisions = List.of();
    /** The cluster's groups ({@link io.ratchet.protocol.Groups}); the first is the cluster's id. */
    private final List<RaftGroupId> groupIds;

    public AdminService(List<RaftGroupId> groupIds, String nodeId, String address, Credentials self, Authorizer authorizer) {
        this.groupIds = List.copyOf(groupIds);
        this.groupId = groupIds.get(0);
        this.self = self;
        this.authorizer = authorizer;
        this.nodeId = nodeId;
        this.address = address;
    }

    /** The gRPC service, for Ratis to add to its server before it starts. */
    public ServerServiceDefinition service() {
        return ServerServiceDefinition.builder(AdminRpc.SERVICE)
                .addMethod(AdminRpc.CALL, ServerCalls.asyncUnaryCall(this::call))
                .build();
    }

    /** Called once the Ratis server has started; until then only {@code status} answers, as starting. */
    public void attach(RaftServer server) throws IOException {
        RaftServer.Division d = server.getDivision(groupId);
        List<RaftServer.Division> all = new ArrayList<>(groupIds.size());
        for (RaftGroupId id : groupIds) {
            all.add(server.getDivision(id));
        }
        this.divisions = List.copyOf(all);
        List<Membership> each = new ArrayList<>(groupIds.size());
        for (int g = 0; g < groupIds.size(); g++) {
            each.add(new Membership(server, all.get(g), groupIds.get(g), groupIds.size(), self, blocking));
        }
        this.memberships = List.copyOf(each);
        this.membership = each.get(0);
        this.division = d;
    }

    private void call(byte[] request, StreamObserver<byte[]> answer) {
        CompletableFuture<ObjectNode> result;
        try {
            result = handle(Json.MAPPER.readTree(request));
        } catch (AdminError e) {
            result = CompletableFuture.failedFuture(e);
        } catch (IOException | RuntimeException e) {
            result = CompletableFuture.completedFuture(AdminError.invalid(
                    e instanceof IOException ? "the request is not JSON: " + e.getMessage() : e.getMessage()).toJson());
        }
        result.exceptionally(AdminService::error).thenAccept(o -> {
            try {
                answer.onNext(Json.MAPPER.writeValueAsBytes(o));
                answer.onCompleted();
            } catch (IOException | RuntimeException e) {
                LOG.debug("admin answer not delivered", e);
            }
        });
    }

    private static ObjectNode error(Throwable t) {
        Throwable cause = Failures.unwrap(t);
        if (cause instanceof AdminError e) {
            return e.toJson();
        }
        LOG.warn("admin call failed", cause);
        return new AdminError(AdminError.UNKNOWN, String.valueOf(cause.getMessage())).toJson();
    }

    private CompletableFuture<ObjectNode> handle(JsonNode request) {
        if (request == null || !request.isObject() || !request.path("op").isTextual()) {
            throw AdminError.invalid("an admin request is a JSON object with an \"op\"");
        }
        String op = request.get("op").asText();
        Refusal denied = authorizer.checkAdmin(TokenInterceptor.current(), op.equals("status"));
        if (denied != null) {
            throw new AdminError(denied.reason() == Refusal.Reason.UNAUTHENTICATED ? AdminError.UNAUTHENTICATED
                    : AdminError.FORBIDDEN, denied.message());
        }
        if (op.equals("status")) {
            return status();
        }
        Membership m = membership;
        if (m == null) {
            throw new AdminError(AdminError.UNAVAILABLE, "node " + nodeId + " is starting");
        }
        if (groupIds.size() > 1 && op.startsWith("members.")) {
            return request.has("group") ? inGroup(op, request) : everyGroup(op, request, TokenInterceptor.current());
        }
        return switch (op) {
            case "members.add" -> m.add(text(request, "id"), text(request, "address"));
            case "members.remove" -> m.remove(text(request, "id"));
            case "leader.transfer" -> m.transferLeadership(text(request, "id"));
            default -> throw AdminError.invalid("unknown admin op '" + op + "'");
        };
    }

    /**
     * A membership change on a cluster of several groups, as the operator asks it (of group 0's leader):
     * the same change in every group, one group after another, each carried out by that group's leader
     * (here, or on the node that leads it, asked with the operator's own token). A node to be added is
     * probed once, before any group has it. Each group's part is done already when the group has the
     * change, so an add or removal that stopped half way (a leader lost, a node that stopped answering)
     * is finished by asking again; the error says so.
     */
    private CompletableFuture<ObjectNode> everyGroup(String op, JsonNode request, String token) {
        ObjectNode perGroup = request.deepCopy();
        CompletableFuture<Void> first;
        if (op.equals("members.add")) {
            String id = text(request, "id");
            String address = text(request, "address");
            Membership.validate(id, address);
            // Probed only when no group has it yet: repeating a half-done add finds it in group 0.
            first = membership.knows(id) ? CompletableFuture.completedFuture(null) : membership.probeAsync(id, address);
        } else if (op.equals("members.remove")) {
            text(request, "id");
            first = CompletableFuture.completedFuture(null);
        } else {
            throw AdminError.invalid("unknown admin op '" + op + "'");
        }
        return first.thenCompose(v -> fromGroup(0, perGroup, token)).thenApply(last -> {
            ObjectNode o = Json.MAPPER.createObjectNode();
            o.set("configuration", Membership.configuration(division.getRaftConf()));
            o.put("groups", groupIds.size());
            return o;
        });
    }

    /** The change in {@code group} and then each group after it, one at a time. */
    private CompletableFuture<Void> fromGroup(int group, ObjectNode request, String token) {
        if (group == groupIds.size()) {
            return CompletableFuture.completedFuture(null);
        }
        return onGroup(group, request.deepCopy().put("group", group), token, 0).handle((answer, e) -> {
            if (e == null) {
                return fromGroup(group + 1, request, token);
            }
            Throwable cause = Failures.unwrap(e);
            AdminError error = cause instanceof AdminError a ? a : new AdminError(AdminError.UNKNOWN, cause.toString());
            if (group == 0 && !error.code().equals(AdminError.UNKNOWN)) {
                return CompletableFuture.<Void>failedFuture(error); // refused before any group changed
            }
            return CompletableFuture.<Void>failedFuture(new AdminError(
                    error.code().equals(AdminError.REFUSED) ? AdminError.REFUSED : AdminError.UNKNOWN,
                    "group " + group + " of " + groupIds.size() + ": " + error.getMessage() + (group == 0 ? "" : "; groups 0.."
                            + (group - 1) + " have the change") + ": ask again to finish it (each group's part is done once)"));
        }).thenCompose(f -> f);
    }

    /** Retries of one group's part while its leadership moves (an election, the leader balancer). */
    private static final int GROUP_ATTEMPTS = 10;

    /** One group's part of a change: here when this node leads the group, else at the node that does. */
    private CompletableFuture<ObjectNode> onGroup(int group, ObjectNode request, String token, int attempt) {
        RaftServer.Division d = divisions.get(group);
        CompletableFuture<ObjectNode> answer;
        if (RaftState.leads(d)) {
            answer = CompletableFuture.completedFuture(null).thenCompose(v -> inGroup(request.get("op").asText(), request));
        } else {
            RaftPeerId leader = d.getInfo().getLeaderId();
            RaftPeer peer = leader == null ? null : d.getRaftConf().getPeer(leader, RaftPeerRole.FOLLOWER, RaftPeerRole.LISTENER);
            answer = peer == null ? CompletableFuture.failedFuture(AdminError.notLeader(nodeId, null))
                    : CompletableFuture.supplyAsync(() -> forward(peer.getAddress(), request, token), blocking);
        }
        return answer.exceptionallyCompose(e -> {
            Throwable cause = Failures.unwrap(e);
            boolean moved = cause instanceof AdminError a
                    && (a.code().equals(AdminError.NOT_LEADER) || a.code().equals(AdminError.NO_LEADER));
            if (!moved || attempt + 1 >= GROUP_ATTEMPTS) {
                return CompletableFuture.failedFuture(cause);
            }
            return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS, blocking))
                    .thenCompose(v -> onGroup(group, request, token, attempt + 1));
        });
    }

    /** A change of one group named in the request ({@code group}), which this node must lead. */
    private CompletableFuture<ObjectNode> inGroup(String op, JsonNode request) {
        int group = request.path("group").asInt(-1);
        if (!request.path("group").isInt() || group < 0 || group >= groupIds.size()) {
            throw AdminError.invalid("'group' is one of the cluster's groups, 0.." + (groupIds.size() - 1));
        }
        Membership m = memberships.get(group);
        return switch (op) {
            case "members.add" -> m.ensureAdded(text(request, "id"), text(request, "address"));
            case "members.remove" -> m.ensureRemoved(text(request, "id"));
            default -> throw AdminError.invalid("unknown admin op '" + op + "'");
        };
    }

    /** Asks the admin service at {@code address} (a node, with this node's certificate and the operator's token). */
    private ObjectNode forward(String address, ObjectNode request, String token) {
        ManagedChannel channel = NodeChannels.open(address, token == null ? self : self.withToken(token));
        try {
            byte[] answer = ClientCalls.blockingUnaryCall(channel, AdminRpc.CALL,
                    CallOptions.DEFAULT.withDeadlineAfter(FORWARD_SECONDS, TimeUnit.SECONDS), Json.MAPPER.writeValueAsBytes(request));
            JsonNode o = Json.MAPPER.readTree(answer);
            if (o.hasNonNull("error")) {
                throw new AdminError(o.path("error").asText(), o.path("message").asText());
            }
            return (ObjectNode) o;
        } catch (StatusRuntimeException e) {
            throw new AdminError(AdminError.NO_LEADER, "the leader of group " + request.path("group").asInt() + " at " + address
                    + " did not answer (" + e.getStatus().getCode() + ")");
        } catch (IOException e) {
            throw new AdminError(AdminError.UNKNOWN, "the answer of " + address + " is not JSON: " + e.getMessage());
        } finally {
            channel.shutdownNow();
        }
    }

    /** How long one group's part of a change may take at another node: an add waits for the new node to catch up. */
    private static final long FORWARD_SECONDS = 120;

    private static String text(JsonNode request, String field) {
        JsonNode value = request.get(field);
        if (value == null || !value.isTextual() || value.asText().isBlank()) {
            throw AdminError.invalid("'" + field + "' is required");
        }
        return value.asText().trim();
    }

    /** This node as it sees itself; the store's figures from its applied state, read in-process. */
    private CompletableFuture<ObjectNode> status() {
        RaftServer.Division d = division;
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("id", nodeId);
        o.put("address", address);
        o.put("clusterId", groupId.getUuid().toString());
        o.put("release", Release.version());
        if (d == null) {
            o.put("role", "STARTING");
            return CompletableFuture.completedFuture(o);
        }
        var info = d.getInfo();
        RaftPeerId leader = info.getLeaderId();
        o.put("role", info.getCurrentRole().name());
        o.put("leader", leader == null ? null : leader.toString());
        RaftPeer leaderPeer = leader == null ? null : d.getRaftConf().getPeer(leader, RaftPeerRole.FOLLOWER, RaftPeerRole.LISTENER);
        o.put("leaderAddress", leaderPeer == null ? null : leaderPeer.getAddress());
        o.put("term", info.getCurrentTerm());
        o.put("commitIndex", d.getRaftLog().getLastCommittedIndex());
        o.put("appliedIndex", info.getLastAppliedIndex());
        o.set("configuration", Membership.configuration(d.getRaftConf()));
        if (groupIds.size() > 1) {
            o.set("groups", groups());
        }
        RatchetStateMachine machine = (RatchetStateMachine) d.getStateMachine();
        return machine.query(RaftBytes.message(Codec.encodeQuery(new Query.Stats()))).thenApply(reply -> {
            Result.Stats stats = (Result.Stats) Codec.decodeResults(reply.getContent().toByteArray()).get(0);
            o.put("clusterTime", stats.clusterTime());
            o.put("items", stats.itemCount());
            o.put("usedBytes", stats.usedBytes());
            o.put("quotaBytes", stats.quotaBytes());
            return o;
        });
    }

    /**
     * Each group as this node sees it, in group order: {@code [{group, role, leader, term, commitIndex,
     * appliedIndex, configuration}]}. The top-level fields are group 0's, as they were before groups. Each
     * group has its own configuration: a membership change made group by group can stop half way.
     */
    private ArrayNode groups() {
        ArrayNode array = Json.MAPPER.createArrayNode();
        List<RaftServer.Division> all = divisions;
        for (int g = 0; g < all.size(); g++) {
            RaftServer.Division d = all.get(g);
            var info = d.getInfo();
            RaftPeerId leader = info.getLeaderId();
            array.addObject().put("group", g).put("role", info.getCurrentRole().name())
                    .put("leader", leader == null ? null : leader.toString()).put("term", info.getCurrentTerm())
                    .put("commitIndex", d.getRaftLog().getLastCommittedIndex())
                    .put("appliedIndex", info.getLastAppliedIndex())
                    .set("configuration", Membership.configuration(d.getRaftConf()));
        }
        return array;
    }

    /** Members as JSON: {@code [{id, address, role: VOTER|LISTENER}]}. */
    static ArrayNode members(Iterable<RaftPeer> voters, Iterable<RaftPeer> listeners) {
        ArrayNode array = Json.MAPPER.createArrayNode();
        voters.forEach(p -> array.addObject().put("id", p.getId().toString()).put("address", p.getAddress()).put("role", "VOTER"));
        listeners.forEach(p -> array.addObject().put("id", p.getId().toString()).put("address", p.getAddress()).put("role", "LISTENER"));
        return array;
    }

    @Override
    public void close() {
        blocking.shutdownNow();
    }
}
