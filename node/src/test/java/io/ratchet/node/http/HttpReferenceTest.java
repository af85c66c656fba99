package io.ratchet.node.http;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ratchet.node.ReferencePage;
import java.io.IOException;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

/** {@code docs/reference/http.md} is the node's OpenAPI document as it is now. */
class HttpReferenceTest {
    @Test
    void theHttpReferenceIsTheOpenApiDocumentAsItIs() throws IOException {
        JsonNode api;
        try (InputStream in = Routes.class.getResourceAsStream("openapi.json")) {
            assertTrue(in != null, "openapi.json is on the class path");
            api = new ObjectMapper().readTree(in);
        }
        String page = HttpReference.page(api);
        api.path("paths").fieldNames().forEachRemaining(path -> assertTrue(page.contains(" " + path + "\n"),
                "every path has its section: " + path));
        ReferencePage.check("http.md", "node", HttpReferenceTest.class, page);
    }
}
