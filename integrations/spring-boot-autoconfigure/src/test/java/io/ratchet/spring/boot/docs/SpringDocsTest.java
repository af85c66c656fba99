package io.ratchet.spring.boot.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.micrometer.RatchetClientMetrics;
import io.ratchet.recipes.lock.LockOptions;
import io.ratchet.recipes.lock.Locks;
import io.ratchet.spring.boot.RatchetAutoConfiguration;
import io.ratchet.testing.InProcessCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The Spring guide and the README's Spring section against the code: the snippet is {@link Accounts} and
 * runs; the properties table is the configuration metadata the build generates; the meters table is
 * what {@link RatchetClientMetrics} registers.
 */
class SpringDocsTest {
    private static final Path REPOSITORY = Path.of("../..").toAbsolutePath().normalize();
    private static final Path GUIDE = REPOSITORY.resolve("docs/SPRING.md");
    private static final Path README = REPOSITORY.resolve("README.md");
    private static final Path SNIPPET_SOURCE = Path.of("src/test/java/io/ratchet/spring/boot/docs/Accounts.java");

    private final InProcessCluster cluster = new InProcessCluster();

    @AfterEach
    void stop() {
        cluster.close();
    }

    @Test
    void theSnippetRunsInABootService() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RatchetAutoConfiguration.class))
                .withBean("ownRatchetClient", RatchetClient.class, cluster::client)
                .withBean(Accounts.class)
                .run(context -> {
                    Accounts accounts = context.getBean(Accounts.class);
                    assertTrue(accounts.claim("ada@example.com", "users/1"));
                    assertTrue(!accounts.claim("ada@example.com", "users/2"), "one owner per e-mail");

                    accounts.nightly();
                    assertEquals(1, accounts.tokens.size(), "the lock was taken and its token handed on");
                    assertTrue(context.getBean(Locks.class).holder("nightly").isEmpty(), "and released");

                    cluster.putDocument("users/1", "{\"id\":\"users/1\",\"name\":\"Ada\"}");
                    accounts.rename("users/1", "Ada Lovelace");
                    assertThat(cluster.document("users/1").orElseThrow().json()).contains("Ada Lovelace");
                });
    }

    @Test
    void theGuideAndTheReadmeShowTheSnippetAsItIs() throws IOException {
        Set<String> source = new TreeSet<>(normalizedLines(Files.readString(SNIPPET_SOURCE, StandardCharsets.UTF_8)));
        for (Path doc : List.of(GUIDE, README)) {
            String block = javaBlockWith(Files.readString(doc, StandardCharsets.UTF_8), "class Accounts");
            List<String> lines = normalizedLines(block);
            assertTrue(lines.size() > 5, doc + " shows the snippet");
            for (String line : lines) {
                assertTrue(source.contains(line), doc + ": '" + line + "' is not in " + SNIPPET_SOURCE);
            }
        }
    }

    @Test
    void thePropertiesTableIsTheConfigurationMetadata() throws IOException {
        JsonNode metadata = new ObjectMapper().readTree(Path.of("target/classes/META-INF/spring-configuration-metadata.json").toFile());
        Set<String> generated = new TreeSet<>();
        metadata.path("properties").forEach(p -> generated.add(p.path("name").asText()));
        assertEquals(generated, tableColumn(Files.readString(GUIDE, StandardCharsets.UTF_8), "| property |"),
                "docs/SPRING.md's properties table and RatchetProperties");
    }

    @Test
    void theMetersTableIsWhatTheBinderRegisters() throws IOException {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RatchetClient client = cluster.client();
        client.metrics().attempted("k"); // a hot key, for the key.* gauges, which follow the keys with conflicts
        client.metrics().conflicted("k");
        new RatchetClientMetrics(client).bindTo(registry);
        client.put("k", 1, 0);
        client.put("k", 1, 0);
        Locks locks = new Locks(client, new LockOptions("docs", Duration.ofMinutes(1)));
        locks.release(locks.tryAcquire("l", Duration.ofSeconds(5)).orElseThrow());
        Set<String> registered = new TreeSet<>();
        registry.getMeters().stream().map(Meter::getId).map(Meter.Id::getName).forEach(registered::add);
        assertEquals(registered, tableColumn(Files.readString(GUIDE, StandardCharsets.UTF_8), "| meter |"),
                "docs/SPRING.md's meters table and RatchetClientMetrics");
    }

    /** The first fenced java block that contains {@code marker}. */
    private static String javaBlockWith(String markdown, String marker) {
        Matcher m = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(markdown);
        while (m.find()) {
            if (m.group(1).contains(marker)) {
                return m.group(1);
            }
        }
        throw new AssertionError("no java block with '" + marker + "'");
    }

    private static List<String> normalizedLines(String text) {
        List<String> lines = new ArrayList<>();
        for (String line : text.split("\n")) {
            String s = line.strip().replaceAll("\\s+", " ");
            if (!s.isEmpty()) {
                lines.add(s);
            }
        }
        return lines;
    }

    /** The first column's code names of the table whose header starts with {@code header}. */
    private static Set<String> tableColumn(String markdown, String header) {
        Set<String> names = new TreeSet<>();
        boolean in = false;
        for (String line : markdown.split("\n")) {
            if (line.startsWith(header)) {
                in = true;
                continue;
            }
            if (in && !line.startsWith("|")) {
                break;
            }
            if (in && !line.startsWith("|---")) {
                Matcher m = Pattern.compile("^\\| `([^`]+)`").matcher(line);
                if (m.find()) {
                    names.add(m.group(1));
                }
            }
        }
        assertTrue(!names.isEmpty(), "a table headed " + header);
        return names;
    }
}
