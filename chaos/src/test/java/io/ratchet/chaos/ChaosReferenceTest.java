package io.ratchet.chaos;

import io.ratchet.node.ReferencePage;
import java.io.IOException;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/** {@code docs/reference/chaos.md} is the harness' options, nemeses and workloads as they are now. */
class ChaosReferenceTest {
    @Test
    void theChaosReferenceIsTheHarnessAsItIs() throws IOException {
        String nemesisSource = Files.readString(ReferencePage.directory().getParent().getParent()
                .resolve("chaos/src/main/java/io/ratchet/chaos/NemesisKind.java"));
        ReferencePage.check("chaos.md", "chaos", ChaosReferenceTest.class, ChaosReference.page(nemesisSource));
    }
}
