package io.ratchet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.ratchet.node.LocalCluster;
import io.ratchet.protocol.Json;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ratchet members} and {@code ratchet leader transfer} against a real in-process cluster. */
class MembersCommandTest {
    @TempDir
    Path dir;

    @Test
    void listsAddsAndRefusesWithExitCodesAndTransfersLeadership() {
        try (LocalCluster cluster = LocalCluster.start(3, dir)) {
            String peers = cluster.peers();
            CommandRun list = CommandRun.of("members", "list", "--json", "--peers", peers);
            assertEquals(ExitCode.DONE, list.code(), list.toString());
            JsonNode members = Json.parse(list.out()).get("members");
            assertEquals(Set.of("n1", "n2", "n3"), ids(members));
            members.forEach(m -> assertEquals("VOTER", m.get("role").asText()));

            String address = cluster.startJoining("n4");
            CommandRun add = CommandRun.of("members", "add", "n4=" + address, "--peers", peers);
            assertEquals(ExitCode.DONE, add.code(), add.toString());
            assertTrue(add.out().contains("n4"), add.out());

            CommandRun again = CommandRun.of("members", "add", "n4=" + address, "--peers", peers);
            assertEquals(ExitCode.REFUSED, again.code(), again.toString());
            assertTrue(again.err().contains("n4 is already a member"), again.err());
            CommandRun malformed = CommandRun.of("members", "add", "n5", "--peers", peers);
            assertEquals(ExitCode.INVALID, malformed.code(), malformed.toString());
            CommandRun unknown = CommandRun.of("members", "remove", "n9", "--json", "--peers", peers);
            assertEquals(ExitCode.REFUSED, unknown.code(), unknown.toString());
            assertEquals("refused", Json.parse(unknown.out()).get("error").asText());

            CommandRun transfer = CommandRun.of("leader", "transfer", "n4", "--peers", peers);
            assertEquals(ExitCode.DONE, transfer.code(), transfer.toString());
            assertEquals("n4", cluster.awaitLeader());

            CommandRun remove = CommandRun.of("members", "remove", "n1", "--json", "--peers", peers);
            assertEquals(ExitCode.DONE, remove.code(), remove.toString());
            assertEquals(Set.of("n2", "n3", "n4"), ids(Json.parse(remove.out()).get("members")));
        }
    }

    /**
     * On a cluster of two groups, an add that reached group 0 only: {@code members} lists group 0's members
     * and, below them, the group that differs and what to do; asking the add again finishes it.
     */
    @Test
    void listsTheGroupsAChangeStoppedHalfWayDidNotReach() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, dir, c -> c.withGroups(2))) {
            String peers = cluster.peers();
            String address = cluster.startJoining("n4");
            cluster.addToOneGroup("n4", address, 0);

            CommandRun json = CommandRun.of("members", "--json", "--peers", peers);
            assertEquals(ExitCode.DONE, json.code(), json.toString());
            JsonNode listed = Json.parse(json.out());
            assertEquals(Set.of("n1", "n2", "n3", "n4"), ids(listed.get("members")));
            JsonNode differing = listed.get("groupsDiffering");
            assertEquals(1, differing.size(), listed.toString());
            assertEquals(1, differing.get(0).get("group").asInt());
            assertEquals("[\"n1\",\"n2\",\"n3\"]", differing.get(0).get("voters").toString());
            CommandRun text = CommandRun.of("members", "--peers", peers);
            assertTrue(text.out().contains("group 1 has other members: voters n1,n2,n3"), text.out());
            assertTrue(text.out().contains("a change stopped half way: ask it again"), text.out());

            CommandRun again = CommandRun.of("members", "add", "n4=" + address, "--json", "--peers", peers);
            assertEquals(ExitCode.DONE, again.code(), again.toString());
            assertEquals(0, Json.parse(again.out()).get("groupsDiffering").size(), again.out());
        }
    }

    private static Set<String> ids(JsonNode members) {
        Set<String> ids = new HashSet<>();
        members.forEach(m -> ids.add(m.get("id").asText()));
        return ids;
    }
}
