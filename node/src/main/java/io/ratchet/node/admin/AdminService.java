package io.ratchet.node.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.common.Credentials;
import io.ratchet.common.Failures;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
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
 *       other node refuses with {@code not_leader}, naming the leader, and the client asks there.</li>
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

    public AdminService(RaftGroupId groupId, String nodeId, String address, Credentials self, Authorizer authorizer) {
        this.groupId = groupId;
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
        this.membership = new Membership(server, d, groupId, self, blocking);
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
        return switch (op) {
            case "members.add" -> m.add(text(request, "id"), text(request, "address"));
            case "members.remove" -> m.remove(text(request, "id"));
            case "leader.transfer" -> m.transferLeadership(text(request, "id"));
            default -> throw AdminError.invalid("unknown admin op '" + op + "'");
        };
    }

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
