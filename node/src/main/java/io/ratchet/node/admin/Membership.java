package io.ratchet.node.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.common.Credentials;
import io.ratchet.common.NodeChannels;
import io.ratchet.node.metrics.RaftState;
import io.ratchet.protocol.AdminRpc;
import io.ratchet.protocol.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.RaftException;
import org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException;
import org.apache.ratis.protocol.exceptions.ReconfigurationTimeoutException;
import org.apache.ratis.protocol.exceptions.SetConfigurationException;
import org.apache.ratis.protocol.exceptions.TransferLeadershipException;
import org.apache.ratis.server.RaftConfiguration;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;

/**
 * Membership changes, carried out by the leader through Ratis' configuration change (joint consensus).
 *
 * <p>Each change is checked first and refused, changing nothing, when it cannot work or would lose the
 * majority: adding an id or address that is a member, or a node that does not answer, is not waiting to
 * join (started with {@code --join} on empty storage) or belongs to another cluster; removing a
 * non-member, the last voter, or a voter whose going would leave fewer live voters than a majority of
 * those that remain. Then it is proposed as compare-and-set on the configuration the checks saw, so two
 * operators' changes at once cannot undo each other: the second is refused.
 *
 * <p>An added node first catches up as a non-voting member (Ratis' staging: the leader sends it the
 * snapshot and the log) and becomes a voter only once it has caught up, so adding a node never counts
 * an empty one towards a majority.
 */
final class Membership {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
    private static final Pattern ADDRESS = Pattern.compile("[A-Za-z0-9_.:\\[\\]-]+:[0-9]{1,5}");
    /** How long a node to be added has to answer its probe. */
    private static final long PROBE_MILLIS = 3_000;
    /** A leader transfer waits this long for the new leader to catch up and win its election. */
    private static final long TRANSFER_MILLIS = 10_000;

    private final RaftServer server;
    private final RaftServer.Division division;
    private final RaftGroupId groupId;
    private final ExecutorService blocking;
    /** How many groups the cluster has: a node to be added must be configured with as many. */
    private final int groups;
    /** What this node shows as a client of a node to be added: its certificate, with TLS. */
    private final Credentials self;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callId = new AtomicLong();
    /**
     * A follower that answered the leader within this long is live: the shortest election timeout, several
     * heartbeats. Tight on purpose: a node counted live that is not can leave the change unable to commit,
     * and the cluster unavailable until it returns; one counted dead that is not only refuses the change.
     */
    private final long liveMillis;

    Membership(RaftServer server, RaftServer.Division division, RaftGroupId groupId, int groups, Credentials self,
               ExecutorService blocking) {
        this.server = server;
        this.groups = groups;
        this.self = self;
        this.division = division;
        this.groupId = groupId;
        this.blocking = blocking;
        this.liveMillis = RaftServerConfigKeys.Rpc.timeoutMin(server.getProperties(), null).toLong(TimeUnit.MILLISECONDS);
    }

    CompletableFuture<ObjectNode> add(String id, String address) {
        return add(id, address, true);
    }

    /** Checks a node's id and address for an add; throws {@link AdminError} (invalid) when one is malformed. */
    static void validate(String id, String address) {
        if (!ID.matcher(id).matches()) {
            throw AdminError.invalid("a node id is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit; not '" + id + "'");
        }
        if (!ADDRESS.matcher(address).matches()) {
            throw AdminError.invalid("a node address is host:port, not '" + address + "'");
        }
    }

    /**
     * One group's part of adding a node to a cluster of several groups: as {@link #add}, without the probe
     * (the coordinator probed once, before the first group), and done already when {@code id} is a member
     * at {@code address}, so that repeating an add that stopped half way finishes it.
     */
    CompletableFuture<ObjectNode> ensureAdded(String id, String address) {
        validate(id, address);
        RaftConfiguration conf = stableLeaderConf();
        RaftPeer existing = conf.getPeer(RaftPeerId.valueOf(id), RaftPeerRole.FOLLOWER, RaftPeerRole.LISTENER);
        if (existing != null && existing.getAddress().equals(address)) {
            return CompletableFuture.completedFuture(Json.MAPPER.createObjectNode().set("configuration", configuration(conf)));
        }
        return add(id, address, false);
    }

    /** One group's part of removing a node: as {@link #remove}, and done already when {@code id} is no member. */
    CompletableFuture<ObjectNode> ensureRemoved(String id) {
        RaftConfiguration conf = stableLeaderConf();
        if (conf.getPeer(RaftPeerId.valueOf(id), RaftPeerRole.FOLLOWER, RaftPeerRole.LISTENER) == null) {
            return CompletableFuture.completedFuture(Json.MAPPER.createObjectNode().set("configuration", configuration(conf)));
        }
        return remove(id);
    }

    /** Whether {@code id} is a member in this node's view of the group's configuration. */
    boolean knows(String id) {
        return division.getRaftConf().getPeer(RaftPeerId.valueOf(id), RaftPeerRole.FOLLOWER, RaftPeerRole.LISTENER) != null;
    }

    private CompletableFuture<ObjectNode> add(String id, String address, boolean probe) {
        validate(id, address);
        RaftConfiguration conf = stableLeaderConf();
        RaftPeer existing = conf.getPeer(RaftPeerId.valueOf(id), RaftPeerRole.FOLLOWER, RaftPeerRole.LISTENER);
        if (existing != null) {
            throw AdminError.refused(id + " is already a member, at " + existing.getAddress());
        }
        for (RaftPeer p : conf.getAllPeers(RaftPeerRole.FOLLOWER)) {
            if (p.getAddress().equals(address)) {
                throw AdminError.refused(address + " is already the address of member " + p.getId());
            }
        }
        RaftPeer joining = RaftPeer.newBuilder().setId(id).setAddress(address).build();
        List<RaftPeer> voters = new ArrayList<>(conf.getCurrentPeers(RaftPeerRole.FOLLOWER));
        voters.add(joining);
        CompletableFuture<Void> probed = probe ? CompletableFuture.runAsync(() -> probe(id, address), blocking)
                : CompletableFuture.completedFuture(null);
        return probed.thenCompose(v -> change(conf, voters, List.copyOf(conf.getCurrentPeers(RaftPeerRole.LISTENER))));
    }

    /** Probes a node to be added (see {@link #add}), off the caller's thread. */
    CompletableFuture<Void> probeAsync(String id, String address) {
        return CompletableFuture.runAsync(() -> probe(id, address), blocking);
    }

    CompletableFuture<ObjectNode> remove(String id) {
        RaftConfiguration conf = stableLeaderConf();
        RaftPeerId peerId = RaftPeerId.valueOf(id);
        RaftPeer member = conf.getPeer(peerId, RaftPeerRole.FOLLOWER, RaftPeerRole.LISTENER);
        if (member == null) {
            throw AdminError.refused(id + " is not a member; the members are " + ids(conf));
        }
        List<RaftPeer> voters = new ArrayList<>(conf.getCurrentPeers(RaftPeerRole.FOLLOWER));
        List<RaftPeer> listeners = new ArrayList<>(conf.getCurrentPeers(RaftPeerRole.LISTENER));
        if (voters.removeIf(p -> p.getId().equals(peerId))) {
            if (voters.isEmpty()) {
                throw AdminError.refused(id + " is the last voter; a cluster needs at least one");
            }
            // Joint consensus needs a majority of the old voters and of the new: the departing voter drops
            // out during the change, so the live voters staying must make both (measured under chaos:
            // 4 -> 3 with one of the 3 not live could not commit, and a leader loss then stalled the cluster).
            // (Only from 2 voters to 1 can the staying ones never be the old majority: the departing one,
            // if live, must help then.)
            long live = voters.stream().filter(p -> live(p.getId())).count();
            int majority = Math.max(voters.size() / 2 + 1, (voters.size() + 1) / 2 + 1);
            long forOld = live + (voters.size() < majority && live(peerId) ? 1 : 0);
            if (live < voters.size() / 2 + 1 || forOld < majority) {
                throw AdminError.refused("without " + id + " the cluster has " + voters.size() + " voters, of which only "
                        + live + " answer the leader; the change needs " + majority + " (a majority of the voters before "
                        + "and after it). Bring members back first");
            }
        } else {
            listeners.removeIf(p -> p.getId().equals(peerId));
        }
        return change(conf, voters, listeners);
    }

    CompletableFuture<ObjectNode> transferLeadership(String id) {
        // The leader's configuration decides: a follower's may lag (one catching up after a restart may not
        // have the entry that added the target yet), and its refusal would be wrong. So a follower redirects.
        requireLeader();
        RaftConfiguration conf = division.getRaftConf();
        RaftPeerId target = RaftPeerId.valueOf(id);
        if (conf.getPeer(target, RaftPeerRole.FOLLOWER) == null) {
            throw AdminError.refused(id + " is not a voting member; the members are " + ids(conf));
        }
        if (target.equals(server.getId())) {
            return CompletableFuture.completedFuture(Json.MAPPER.createObjectNode().put("leader", id));
        }
        if (!live(target)) {
            throw AdminError.refused(id + " has not answered the leader lately; it cannot take over");
        }
        TransferLeadershipRequest request = new TransferLeadershipRequest(clientId, server.getId(), groupId,
                callId.incrementAndGet(), target, TRANSFER_MILLIS);
        try {
            return server.transferLeadershipAsync(request).thenApply(reply -> {
                check(reply);
                return Json.MAPPER.createObjectNode().put("leader", id);
            });
        } catch (IOException e) {
            throw new AdminError(AdminError.UNAVAILABLE, e.getMessage());
        }
    }

    /** The configuration and its members, as a status answer carries it. */
    static ObjectNode configuration(RaftConfiguration conf) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("index", conf.getLogEntryIndex());
        o.put("changing", !conf.getPreviousPeers().isEmpty());
        o.set("members", AdminService.members(conf.getCurrentPeers(RaftPeerRole.FOLLOWER),
                conf.getCurrentPeers(RaftPeerRole.LISTENER)));
        return o;
    }

    private CompletableFuture<ObjectNode> change(RaftConfiguration seen, List<RaftPeer> voters, List<RaftPeer> listeners) {
        SetConfigurationRequest.Arguments arguments = SetConfigurationRequest.Arguments.newBuilder()
                .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET)
                .setServersInCurrentConf(List.copyOf(seen.getCurrentPeers(RaftPeerRole.FOLLOWER)))
                .setListenersInCurrentConf(List.copyOf(seen.getCurrentPeers(RaftPeerRole.LISTENER)))
                .setServersInNewConf(voters)
                .setListenersInNewConf(listeners)
                .build();
        SetConfigurationRequest request = new SetConfigurationRequest(clientId, server.getId(), groupId,
                callId.incrementAndGet(), arguments);
        try {
            return server.setConfigurationAsync(request).thenApply(reply -> {
                check(reply);
                return Json.MAPPER.createObjectNode().set("configuration", configuration(division.getRaftConf()));
            });
        } catch (IOException e) {
            throw new AdminError(AdminError.UNAVAILABLE, e.getMessage());
        }
    }

    /** A failed reply as the refusal it is; in doubt only where Ratis may still carry the change out. */
    private void check(RaftClientReply reply) {
        if (reply.isSuccess()) {
            return;
        }
        RaftException e = reply.getException();
        if (e instanceof NotLeaderException n) {
            throw AdminError.notLeader(server.getId().toString(), n.getSuggestedLeader());
        }
        if (e instanceof LeaderNotReadyException || e instanceof LeaderSteppingDownException) {
            throw AdminError.notLeader(server.getId().toString(), null);
        }
        if (e instanceof ReconfigurationTimeoutException) {
            throw AdminError.refused("the new member did not catch up in time, so it was not added: " + e.getMessage());
        }
        if (e instanceof ReconfigurationInProgressException || e instanceof SetConfigurationException
                || e instanceof TransferLeadershipException) {
            throw AdminError.refused(e.getMessage());
        }
        throw new AdminError(AdminError.UNKNOWN, (e == null ? "the change failed" : e.getMessage())
                + "; read 'members list' before trying again");
    }

    /** The leader's configuration, when it is not in the middle of a change. */
    private RaftConfiguration stableLeaderConf() {
        requireLeader();
        RaftConfiguration conf = division.getRaftConf();
        if (!conf.getPreviousPeers().isEmpty()) {
            throw AdminError.refused("a membership change is in progress; try again when it is done");
        }
        return conf;
    }

    private void requireLeader() {
        if (!RaftState.leads(division)) {
            RaftPeerId leader = division.getInfo().getLeaderId();
            throw AdminError.notLeader(server.getId().toString(),
                    leader == null ? null : division.getRaftConf().getPeer(leader, RaftPeerRole.FOLLOWER, RaftPeerRole.LISTENER));
        }
    }

    /** Whether the leader (this node) heard from {@code peer} lately; the leader itself is live. */
    private boolean live(RaftPeerId peer) {
        if (peer.equals(server.getId())) {
            return true;
        }
        for (ServerRpcProto follower : division.getInfo().getRoleInfoProto().getLeaderInfo().getFollowerInfoList()) {
            if (follower.getId().getId().toStringUtf8().equals(peer.toString())) {
                return follower.getLastRpcElapsedTimeMs() < liveMillis;
            }
        }
        return false;
    }

    /**
     * Asks the node at {@code address} for its status: it must answer, be {@code id}, be of this cluster,
     * and be waiting to join (in no configuration yet).
     */
    private void probe(String id, String address) {
        ManagedChannel channel = NodeChannels.open(address, self);
        try {
            byte[] answer = ClientCalls.blockingUnaryCall(channel, AdminRpc.CALL,
                    CallOptions.DEFAULT.withDeadlineAfter(PROBE_MILLIS, TimeUnit.MILLISECONDS),
                    Json.MAPPER.writeValueAsBytes(Json.MAPPER.createObjectNode().put("op", "status")));
            JsonNode status = Json.MAPPER.readTree(answer);
            if (status.hasNonNull("error")) {
                // A node with a permission table of its own (one that applied a snapshot of some cluster)
                // asks even the leader for a token: it is not on empty storage, so it cannot join.
                throw AdminError.refused("the node at " + address + " refused the status probe (" + status.path("error").asText()
                        + ": " + status.path("message").asText() + "); a joining node must be on empty storage: "
                        + "wipe it and start it with --join");
            }
            String cluster = status.path("clusterId").asText();
            if (!cluster.equals(groupId.getUuid().toString())) {
                throw AdminError.refused("the node at " + address + " belongs to cluster " + cluster + ", not this one ("
                        + groupId.getUuid() + ")");
            }
            if (!status.path("id").asText().equals(id)) {
                throw AdminError.refused("the node at " + address + " is " + status.path("id").asText() + ", not " + id);
            }
            if ("STARTING".equals(status.path("role").asText())) {
                throw AdminError.refused("the node at " + address + " is still starting; try again shortly");
            }
            int groups = Math.max(1, status.path("groups").size());
            if (groups != this.groups) {
                throw AdminError.refused("the node at " + address + " is configured with " + groups + " group"
                        + (groups == 1 ? "" : "s") + ", and this cluster has " + this.groups + ": set groups = "
                        + this.groups + " in its configuration, wipe its storage and start it with --join");
            }
            if (!status.path("configuration").path("members").isEmpty()) {
                throw AdminError.refused("the node at " + address + " is already in a configuration (its data is of an "
                        + "earlier membership): wipe its storage and start it with --join");
            }
        } catch (StatusRuntimeException e) {
            throw AdminError.refused("no node answers at " + address + " (" + e.getStatus().getCode()
                    + "); start it first with --join");
        } catch (IOException e) {
            throw AdminError.refused("the node at " + address + " gave an answer that is not JSON: " + e.getMessage());
        } finally {
            channel.shutdownNow();
        }
    }

    private static String ids(RaftConfiguration conf) {
        return conf.getAllPeers(RaftPeerRole.FOLLOWER).stream().map(p -> p.getId().toString()).sorted().toList().toString();
    }
}
