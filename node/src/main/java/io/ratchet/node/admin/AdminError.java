package io.ratchet.node.admin;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ratchet.protocol.Json;
import org.apache.ratis.protocol.RaftPeer;

/** An admin call's typed refusal, answered as {@code {"error": code, "message": ..., "leader": ...}}. */
final class AdminError extends RuntimeException {
    static final String INVALID = "invalid";
    static final String REFUSED = "refused";
    static final String NOT_LEADER = "not_leader";
    static final String NO_LEADER = "no_leader";
    static final String UNAVAILABLE = "unavailable";
    static final String UNKNOWN = "unknown";
    static final String UNAUTHENTICATED = "unauthenticated";
    static final String FORBIDDEN = "forbidden";

    private final String code;
    private final RaftPeer leader;

    AdminError(String code, String message) {
        this(code, message, null);
    }

    private AdminError(String code, String message, RaftPeer leader) {
        super(message, null, false, false);
        this.code = code;
        this.leader = leader;
    }

    /** The error's code: one of the constants above. */
    String code() {
        return code;
    }

    static AdminError invalid(String message) {
        return new AdminError(INVALID, message);
    }

    static AdminError refused(String message) {
        return new AdminError(REFUSED, message);
    }

    /** This node does not lead; {@code leader} is the one it knows, or null. */
    static AdminError notLeader(String self, RaftPeer leader) {
        return leader == null
                ? new AdminError(NO_LEADER, "node " + self + " knows no leader now; try again shortly")
                : new AdminError(NOT_LEADER, "node " + self + " is not the leader; " + leader.getId() + " is", leader);
    }

    ObjectNode toJson() {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("error", code);
        o.put("message", getMessage());
        if (leader != null) {
            o.putObject("leader").put("id", leader.getId().toString()).put("address", leader.getAddress());
        }
        return o;
    }
}
