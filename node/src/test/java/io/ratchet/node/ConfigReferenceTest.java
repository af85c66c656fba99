package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code docs/reference/config.md} is {@link NodeConfig#KEYS} as it is now, and {@code KEYS} is what {@link
 * NodeConfig#load} reads: each documented default is what a file that leaves the key out gets, and each
 * documented key changes what is loaded. (That load reads no key outside {@code KEYS}, it checks itself.)
 */
class ConfigReferenceTest {
    private static final Map<String, String> REQUIRED = Map.of("id", "n1", "peers", "n1=127.0.0.1:7101", "storage", "data/n1");

    @TempDir
    Path dir;

    @Test
    void theConfigReferenceIsNodeConfigsKeysAsTheyAre() {
        ReferencePage.check("config.md", "node", ConfigReferenceTest.class, ConfigReference.page());
    }

    @Test
    void everyDocumentedDefaultIsWhatLoadTakesWhenTheKeyIsLeftOut() throws IOException {
        Map<String, String> defaults = new LinkedHashMap<>(REQUIRED);
        NodeConfig.KEYS.stream().filter(k -> k.defaultValue() != null).forEach(k -> defaults.put(k.name(), k.defaultValue()));
        assertEquals(load(REQUIRED), load(defaults), "a file with every default written out is a file without them");
    }

    @Test
    void everyDocumentedKeyIsReadByLoad() throws IOException {
        NodeConfig plain = load(REQUIRED);
        for (NodeConfig.Key key : NodeConfig.KEYS) {
            Map<String, String> file = new LinkedHashMap<>(REQUIRED);
            file.put(key.name(), "x-not-a-default-1");
            try {
                assertNotEquals(plain, load(file), key.name() + " changes what is loaded");
            } catch (IllegalArgumentException refused) {
                // Read, and refused: a number, a peer list, or one TLS file of three.
            }
        }
    }

    private NodeConfig load(Map<String, String> keys) throws IOException {
        Path file = Files.createTempFile(dir, "node", ".properties");
        StringBuilder text = new StringBuilder();
        keys.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
        Files.writeString(file, text);
        return NodeConfig.load(file, dir);
    }
}
