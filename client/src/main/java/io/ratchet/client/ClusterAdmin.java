package io.ratchet.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.common.Failures;
import io.ratchet.common.NodeChannels;
import io.ratchet.protocol.AdminRpc;
import io.ratchet.protocol.Json;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.StatusRuntimeException;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;

/**
 * An operator's view of the cluster, through every node's administration service ({@link AdminRpc}):
 * each node's status, the membership, and changes to it. Changes go to the leader, found as writes find
 * it (a node that does not lead names the one that does).
 *
 * <pre>{@code
 * try (ClusterAdmin admin = ClusterAdmin.connect(ClientOptions.parse("n1=10.0.0.1:7001,n2=10.0.0.2:7001"))) {
 *     admin.addMember("n4", "10.0.0.4:7001");   // after starting n4 with --join
 *     admin.removeMember("n2");
 * }
 * }</pre>
 */
public final class ClusterAdmin implements AutoCloseable {
    /** A configuration change waits for a new node to catch up from the snapshot and log: give it time. */
    private static final Duration CHANGE_TIMEOUT = Duration.ofMinutes(3);
    /** Between rounds of asking while no node knows a leader: up to about one election. */
    private static final Backoff ELECTION_BACKOFF = new Backoff(Duration.ofMillis(100), Duration.ofMillis(600));

    /**
     * One member of the configuration, with what it answered of itself.
     *
     * @param role   VOTER or LISTENER
     * @param status its own status; UNREACHABLE when it did not answer
     * @param lag    how many committed entries it has still to apply, by the leader's commit index
     */
    public record Member(String id, String address, String role, NodeStatus status, long lag) {
    }

    /**
     * The cluster's configuration as the leader (or, without one, the node that answered) holds it; on a
     * cluster of several groups, group 0's.
     *
     * @param leader    the leader's id, or null
     * @param index     the log index of the entry that made this configuration
     * @param changing  whether a change is under way (joint consensus)
     * @param differing on a cluster of several groups, each group whose members are not group 0's: a change
     *                  stopped half way, which asking again finishes (empty when every group agrees)
     */
    public record Membership(String leader, long index, boolean changing, List<Member> members,
                             List<GroupMembers> differing) {
    }

    /**
     * A group's members as the node that leads it (or, without one, any node) holds them, in id order.
     *
     * @param voters    the voters' ids
     * @param listeners the listeners' ids
     */
    public record GroupMembers(int group, List<String> voters, List<String> listeners) {
        static GroupMembers of(int group, NodeStatus.Configuration conf) {
            return new GroupMembers(group, conf.voters(), conf.listeners());
        }
    }

    private final ClientOptions options;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private volatile String leaderAddress;
    /** Members' addresses the nodes named in status answers, beyond the configured peers. */
    private final List<String> known = new CopyOnWriteArrayList<>();

    private ClusterAdmin(ClientOptions options) {
        this.options = options;
    }

    public static ClusterAdmin connect(ClientOptions options) {
        return new ClusterAdmin(options);
    }

    /** Every configured node's status, and every member any of them names, asked in parallel. */
    public List<NodeStatus> status() {
        Map<String, NodeStatus> byAddress = new LinkedHashMap<>();
        Map<String, String> toAsk = new LinkedHashMap<>();
        options.peers().forEach((id, address) -> toAsk.put(address, id));
        while (!toAsk.isEmpty()) {
            Map<String, CompletableFuture<NodeStatus>> asked = new LinkedHashMap<>();
            toAsk.forEach((address, id) -> asked.put(address, statusOf(id, address)));
            toAsk.clear();
            asked.forEach((address, answer) -> byAddress.put(address, RatchetClient.await(answer)));
            for (NodeStatus s : List.copyOf(byAddress.values())) {
                for (NodeStatus.ConfiguredPeer p : s.configuration().members()) {
                    if (!known.contains(p.address())) {
                        known.add(p.address());
                    }
                    if (!byAddress.containsKey(p.address())) {
                        toAsk.put(p.address(), p.id());
                    }
                }
            }
        }
        List<NodeStatus> all = new ArrayList<>(byAddress.values());
        all.sort(Comparator.comparing(NodeStatus::id));
        return all;
    }

    /** The configuration, each member with its own status and lag. */
    public Membership members() {
        List<NodeStatus> nodes = status();
        NodeStatus source = nodes.stream().filter(n -> "LEADER".equals(n.role())).findFirst()
                .or(() -> nodes.stream().filter(n -> !n.configuration().members().isEmpty()).findFirst())
                .orElseThrow(() -> new ClusterUnavailableException("no node answered with the cluster's configuration: "
                        + nodes.stream().map(n -> n.id() + " " + n.error()).toList(), null));
        Map<String, NodeStatus> byId = new LinkedHashMap<>();
        nodes.forEach(n -> byId.put(n.id(), n));
        List<Member> members = new ArrayList<>();
        for (NodeStatus.ConfiguredPeer p : source.configuration().members()) {
            NodeStatus s = byId.getOrDefault(p.id(), NodeStatus.unreachable(p.id(), p.address(), "not asked"));
            long lag = "UNREACHABLE".equals(s.role()) ? -1 : Math.max(0, source.commitIndex() - s.appliedIndex());
            members.add(new Member(p.id(), p.address(), p.role(), s, lag));
        }
        return new Membership("LEADER".equals(source.role()) ? source.id() : source.leader(), source.configuration().index(),
                source.configuration().changing(), members, differing(nodes, GroupMembers.of(0, source.configuration())));
    }

    /**
     * The groups whose members are not {@code first}'s, each as the node that leads it says, or without a
     * leader, any node that knows it; a group no node knows is left out.
     */
    private static List<GroupMembers> differing(List<NodeStatus> nodes, GroupMembers first) {
        List<GroupMembers> differing = new ArrayList<>();
        for (int g = 1; g < NodeStatus.groupCount(nodes); g++) {
            int group = g;
            NodeStatus.leaderOf(nodes, group).or(() -> nodes.stream().filter(n -> n.group(group) != null
                            && !n.group(group).configuration().members().isEmpty()).findFirst())
                    .map(n -> GroupMembers.of(group, n.group(group).configuration()))
                    .filter(m -> !m.voters().equals(first.voters()) || !m.listeners().equals(first.listeners()))
                    .ifPresent(differing::add);
        }
        return List.copyOf(differing);
    }

    /**
     * Adds the node {@code id} at {@code address}, which must be running and waiting to join (started with
     * {@code --join} on empty storage). Returns once it has caught up and the new configuration is
     * committed.
     *
     * @throws AdminRefusedException when the cluster refuses: nothing changed
     */
    public Membership addMember(String id, String address) {
        change(Json.MAPPER.createObjectNode().put("op", "members.add").put("id", id).put("address", address));
        return members();
    }

    /**
     * Removes the member {@code id}; it stops serving the cluster once the change commits.
     *
     * @throws AdminRefusedException when it is not a member, is the last voter, or the voters left would
     *                               not have a live majority: nothing changed
     */
    public Membership removeMember(String id) {
        change(Json.MAPPER.createObjectNode().put("op", "members.remove").put("id", id));
        return members();
    }

    /** Makes the voter {@code id} the leader; returns once it leads. */
    public void transferLeadership(String id) {
        change(Json.MAPPER.createObjectNode().put("op", "leader.transfer").put("id", id));
    }

    /**
     * Sends a change to the leader: the one last named, else each node in turn, following redirects; while
     * there is no leader (an election), it goes round again after a pause, a few times.
     */
    private JsonNode change(ObjectNode request) {
        List<String> tried = new ArrayList<>();
        String next = leaderAddress;
        boolean sentUnanswered = false;
        long deadline = System.nanoTime() + options.operationTimeout().toNanos();
        for (int attempt = 0; attempt == 0 || System.nanoTime() < deadline; attempt++) {
            // The configured peers and every member a node named: the leader may be a node added later.
            List<String> addresses = new ArrayList<>(options.peers().values());
            known.stream().filter(a -> !addresses.contains(a)).forEach(addresses::add);
            String address = next != null ? next : addresses.get(attempt % addresses.size());
            next = null;
            if (attempt > 0 && attempt % addresses.size() == 0 && !pause(attempt / addresses.size())) {
                Thread.currentThread().interrupt();
                // As at the deadline below: a send that got no answer may have reached a leader that made it.
                throw sentUnanswered ? new UnknownOutcomeException("interrupted, and an earlier attempt got no answer "
                        + "and may have made the change: read 'members list'", null)
                        : new ClusterUnavailableException("interrupted before any node took the change", null);
            }
            JsonNode answer;
            try {
                answer = call(address, request, CHANGE_TIMEOUT);
            } catch (StatusRuntimeException e) {
                tried.add(address + ": " + e.getStatus().getCode());
                // A call that failed after it was sent may have reached a leader that made the change. Only a
                // refused connection proves it never left (as for writes, GrpcConnector): an UNAVAILABLE whose
                // cause is a reset or closed connection came from a node that had the request, went down (killed,
                // halted on a failed disk) and may have started the change, which its successor then finishes.
                // Taken for unsent, the next node's "already a member" was reported as a refusal (a soak saw 7).
                sentUnanswered |= e.getStatus().getCode() != Status.Code.UNAVAILABLE || Failures.find(e, ConnectException.class) == null;
                continue;
            }
            String error = answer.path("error").asText(null);
            if (error == null) {
                leaderAddress = address;
                return answer;
            }
            String message = answer.path("message").asText();
            switch (error) {
                case "not_leader" -> next = answer.path("leader").path("address").asText();
                case "no_leader", "unavailable" -> tried.add(address + ": " + message);
                case "invalid" -> throw new InvalidRequestException(message, null);
                // Refused now, but an earlier send that got no answer may have made the change itself
                // ("n5 is already a member"): that is no refusal of it, and says nothing changed falsely.
                case "refused" -> throw sentUnanswered ? new UnknownOutcomeException(message + "; an earlier attempt got no "
                        + "answer and may have made the change: read 'members list'", null) : new AdminRefusedException(message);
                case "unauthenticated" -> throw new AuthenticationException(message);
                case "forbidden" -> throw new PermissionDeniedException(message);
                default -> throw new UnknownOutcomeException(message, null);
            }
        }
        String last = "tried " + tried.subList(Math.max(0, tried.size() - 6), tried.size());
        if (sentUnanswered) {
            // Not "certainly not applied": a send that got no answer may have reached a leader that made it.
            throw new UnknownOutcomeException("no answer to the change within " + options.operationTimeout().toSeconds()
                    + " s, and an earlier attempt got no answer and may have made the change: read 'members list'; " + last, null);
        }
        throw new ClusterUnavailableException("no leader took the change within " + options.operationTimeout().toSeconds()
                + " s; " + last, null);
    }

    /**
     * After {@code rounds} rounds without a leader: jittered, growing to about an election. False when the
     * thread was interrupted (its flag is then clear; the caller sets it again).
     */
    private static boolean pause(int rounds) {
        try {
            Thread.sleep(ELECTION_BACKOFF.delay(rounds, ThreadLocalRandom.current()).toMillis());
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    /**
     * Node {@code id}'s own status, asked without a thread of its own (gRPC's asynchronous call), so a
     * status of many nodes is one round trip; a node that does not answer is in it as unreachable.
     */
    private CompletableFuture<NodeStatus> statusOf(String id, String address) {
        CompletableFuture<byte[]> answer = new CompletableFuture<>();
        try {
            ClientCalls.asyncUnaryCall(channel(address).newCall(AdminRpc.CALL, CallOptions.DEFAULT.withDeadlineAfter(
                            options.requestTimeout().toMillis(), TimeUnit.MILLISECONDS)),
                    Json.MAPPER.writeValueAsBytes(Json.MAPPER.createObjectNode().put("op", "status")),
                    new StreamObserver<>() {
                        @Override
                        public void onNext(byte[] value) {
                            answer.complete(value);
                        }

                        @Override
                        public void onError(Throwable t) {
                            answer.completeExceptionally(t);
                        }

                        @Override
                        public void onCompleted() {
                            answer.completeExceptionally(
                                    new IllegalStateException("the node at " + address + " sent no answer"));
                        }
                    });
        } catch (IOException | RuntimeException e) {
            answer.completeExceptionally(e);
        }
        return answer.handle((bytes, error) -> {
            if (error != null) {
                Throwable cause = Failures.unwrap(error);
                if (cause instanceof StatusRuntimeException e) {
                    return NodeStatus.unreachable(id, address, e.getStatus().getCode()
                            + (e.getStatus().getDescription() == null ? "" : ": " + e.getStatus().getDescription()));
                }
                return NodeStatus.unreachable(id, address, RatchetClient.describe(cause));
            }
            JsonNode s;
            try {
                s = Json.MAPPER.readTree(bytes);
            } catch (IOException e) {
                return NodeStatus.unreachable(id, address, "the node answered with something that is not JSON");
            }
            String refusal = s.path("error").asText(null);
            if ("unauthenticated".equals(refusal)) {
                throw new AuthenticationException(s.path("message").asText());
            }
            return refusal != null ? NodeStatus.unreachable(id, address, s.path("message").asText()) : NodeStatus.fromJson(s);
        });
    }

    private ManagedChannel channel(String address) {
        return channels.computeIfAbsent(address, a -> NodeChannels.open(a, options.credentials()));
    }

    private JsonNode call(String address, ObjectNode request, Duration timeout) {
        try {
            byte[] answer = ClientCalls.blockingUnaryCall(channel(address), AdminRpc.CALL,
                    CallOptions.DEFAULT.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS),
                    Json.MAPPER.writeValueAsBytes(request));
            return Json.MAPPER.readTree(answer);
        } catch (IOException e) {
            throw new IllegalStateException("the node at " + address + " answered with something that is not JSON", e);
        }
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
        channels.clear();
    }
}
