package io.ratchet.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * What a user imports: ratchet-bom names every published artifact of the build, at the build's version, and
 * the library artifacts come with their sources and javadoc jars.
 */
class PublishedArtifactsIT {
    private static final Path REPOSITORY = Path.of(System.getProperty("ratchet.repository", "..")).toAbsolutePath().normalize();
    private static final String VERSION = System.getProperty("ratchet.version");
    /** Modules that are built but not published: tools, the release archive and the example service. */
    private static final Set<String> UNPUBLISHED = Set.of("ratchet-chaos", "ratchet-microbench", "ratchet-dist",
            "ratchet-example-signup");
    /** What a user's code depends on, and so reads in an IDE: these carry sources and javadoc. */
    private static final List<String> LIBRARIES = List.of("protocol", "common", "client", "recipes", "statemachine", "testing");

    @Test
    void theBomNamesEveryPublishedArtifactAtTheBuildsVersion() throws Exception {
        Set<String> published = new TreeSet<>();
        collect(REPOSITORY, published);
        published.removeAll(UNPUBLISHED);

        Document bom = parse(REPOSITORY.resolve("bom/pom.xml"));
        assertEquals(VERSION, text(bom.getDocumentElement(), "version"), "the BOM's version is the build's");
        Set<String> named = new TreeSet<>();
        NodeList deps = bom.getElementsByTagName("dependency");
        for (int i = 0; i < deps.getLength(); i++) {
            Element dep = (Element) deps.item(i);
            named.add(text(dep, "artifactId"));
            assertEquals("${project.version}", text(dep, "version"), text(dep, "artifactId") + " at the BOM's own version");
        }
        assertEquals(published, named, "ratchet-bom lists exactly the published jar artifacts");
    }

    @Test
    void theLibrariesComeWithSourcesAndJavadoc() {
        for (String module : LIBRARIES) {
            for (String classifier : List.of("sources", "javadoc")) {
                Path jar = REPOSITORY.resolve(module).resolve("target").resolve("ratchet-" + module + "-" + VERSION + "-" + classifier + ".jar");
                assertTrue(Files.isRegularFile(jar), "no " + jar);
            }
        }
    }

    /** The jar artifacts of the module at {@code dir} and of its modules, recursively. */
    private static void collect(Path dir, Set<String> artifacts) throws Exception {
        Document pom = parse(dir.resolve("pom.xml"));
        Element project = pom.getDocumentElement();
        String packaging = text(project, "packaging");
        if (packaging == null || packaging.equals("jar")) {
            artifacts.add(text(project, "artifactId"));
        }
        NodeList modules = project.getElementsByTagName("module");
        List<String> names = new ArrayList<>();
        for (int i = 0; i < modules.getLength(); i++) {
            // Only the modules of the default build, not those of a profile.
            if (modules.item(i).getParentNode().getParentNode() == project) {
                names.add(modules.item(i).getTextContent().trim());
            }
        }
        for (String name : names) {
            collect(dir.resolve(name), artifacts);
        }
    }

    private static Document parse(Path pom) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
    }

    /** The text of {@code parent}'s own child element {@code name}, or null. */
    private static String text(Element parent, String name) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                return e.getTextContent().trim();
            }
        }
        return null;
    }
}
