package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node listens on its own address from peers. The operator who copied n1's configuration to the second
 * machine and forgot to change its id is told so at once, and nothing is written to the storage.
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
}
