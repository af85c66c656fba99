package io.ratchet.protocol;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.apache.ratis.protocol.RaftGroupId;

/** A cluster is named; nodes and clients derive the same Raft group id from the name. */
public final class GroupName {
    private GroupName() {
    }

    public static RaftGroupId toGroupId(String name) {
        return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(("ratchet-group:" + name).getBytes(StandardCharsets.UTF_8)));
    }
}
