package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ratchet.client.RatchetClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node listens on its own address from peers. The operator who copied n1's configuration to the second
 * machine and forgot to change its id is told so at once, and nothing is written to the storage. A node whose
 * published address is not its own (NAT, a container's mapped port) says where to listen with {@code listen}.
 */
class OwnAddressTest {
    @TempDir
    Path dir;

    @Test
    void aNodeWhoseAddressIsAnotherMachinesRefusesToStartNamingIt() {
        // 192.0.2.0/24 is for documentation (RFC 5737): no machine has it.
        Path storage = dir.resolve("n1");
        NodeConfig copied = NodeConfig.of("n1", Map.of("n1", "192.0.2.1:7101", "n2", "127.0.0.1:7102"), storage);
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> RatchetNode.start(copied));
        assertTrue(refused.getMessage().contains("node n1 will not start: its address in peers, 192.0.2.1:7101, is not one "
                + "of this machine's"), refused.getMessage());
        assertTrue(refused.getMessage().contains("id must name the peer whose address is that machine's"), refused.getMessage());
        assertFalse(Files.exists(storage), "nothing was written");
    }

    @Test
    void aNodeOnAnAddressOfThisMachineIsLetThrough() {
        assertNull(RatchetNode.foreignAddress(NodeConfig.of("n1", Map.of("n1", "127.0.0.1:7101"), dir)));
    }

    @Test
    void aListenAddressOfThisMachineLetsANodeWithAForeignPublishedAddressStart() {
        NodeConfig natted = NodeConfig.of("n1", Map.of("n1", "192.0.2.1:7101"), dir).withListen("127.0.0.1");
        assertNull(RatchetNode.foreignAddress(natted));
        String refused = RatchetNode.foreignAddress(natted.withListen("192.0.2.7"));
        assertTrue(refused.startsWith("its listen address, 192.0.2.7, is not one of this machine's"), refused);
        String hinted = RatchetNode.foreignAddress(natted.withListen(null));
        assertTrue(hinted.contains("set listen to an address of its own, or 0.0.0.0"), hinted);
    }

    @Test
    void listenIsReadFromTheConfigurationAndAbsentMeansTheHostFromPeers() throws Exception {
        Path conf = dir.resolve("n1.properties");
        Files.writeString(conf, "id=n1\npeers=n1=10.0.0.1:7101\nstorage=x\nlisten=0.0.0.0\n");
        assertEquals("0.0.0.0", NodeConfig.load(conf, dir).listenHost());
        Files.writeString(conf, "id=n1\npeers=n1=10.0.0.1:7101\nstorage=x\n");
        assertEquals("10.0.0.1", NodeConfig.load(conf, dir).listenHost());
    }

    @Test
    void aNodeListeningOnEveryInterfaceIsReachedAtItsPublishedAddress() throws Exception {
        int port = FreePorts.next();
        NodeConfig config = NodeConfig.of("n1", Map.of("n1", "127.0.0.1:" + port), dir.resolve("n1")).withListen("0.0.0.0");
        try (RatchetNode node = RatchetNode.start(config);
             RatchetClient client = RatchetClient.connect("127.0.0.1:" + port)) {
            assertTrue(client.put("listen/every", "yes", 0).successful());
            assertEquals("yes", client.get("listen/every").orElseThrow().valueNode().asText());
        }
    }
}
