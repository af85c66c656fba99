package io.ratchet.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.openqa.selenium.support.ui.ExpectedConditions.textMatches;
import static org.openqa.selenium.support.ui.ExpectedConditions.textToBe;
import static org.openqa.selenium.support.ui.ExpectedConditions.visibilityOfElementLocated;

import io.ratchet.client.CompareExchangeResult;
import io.ratchet.client.RatchetClient;
import io.ratchet.protocol.Item;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Level;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.WindowType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console in a real headless Chromium, against a real 3-node cluster: create, edit, a conflict
 * between two tabs, delete, and the cluster view across a leader kill. Every write the page makes is
 * checked through the Java client, so a page that only looks right fails.
 *
 * <p>The scenarios run in order on one item ({@value #KEY}). The console is opened on a node that is not
 * the leader, so the page survives the leader's stop in the last one. Needs Debian's {@code chromium} and
 * {@code chromium-driver}; skipped without them, except on CI ({@code CI=true}), where it fails.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserIT {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final String KEY = "console/ada";

    @TempDir
    static Path dir;

    private static LocalCluster cluster;
    private static RatchetClient client;
    private static WebDriver driver;
    private static WebDriverWait wait;
    /** The node whose console the browser uses; never the leader when a scenario starts. */
    private static String consoleNode;

    @BeforeAll
    static void start() {
        if (!Files.isExecutable(CHROMIUM) || !Files.isExecutable(CHROMEDRIVER)) {
            String why = "the console test needs headless Chromium: " + CHROMIUM + " and " + CHROMEDRIVER
                    + ", from the Debian packages chromium chromium-driver (apt-get install -y chromium chromium-driver)";
            if ("true".equals(System.getenv("CI"))) {
                fail(why + "; on CI, .ci/run installs chromium chromium-driver before mvn verify: check its log");
            }
            Assumptions.assumeTrue(false, why);
        }
        cluster = LocalCluster.start(3, dir.resolve("cluster"));
        client = cluster.client();
        consoleNode = follower();

        // With the driver named here, Selenium Manager has nothing to find and downloads nothing.
        System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.toString());
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toString());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--window-size=1280,900", "--user-data-dir=" + dir.resolve("chromium-profile"));
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        driver = new ChromeDriver(options);
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
        wait = new WebDriverWait(driver, Duration.ofSeconds(20));
    }

    @AfterAll
    static void stop() {
        try {
            if (driver != null) {
                driver.quit();
            }
        } finally {
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    /**
     * A screenshot of where each scenario ended (or failed), and the page's console messages: a script
     * error fails the scenario (the browser's own notes on 4xx answers, which the page handles, do not).
     */
    @AfterEach
    void screenshotAndConsole(TestInfo info) throws IOException {
        if (driver == null) {
            return;
        }
        String name = info.getTestMethod().map(m -> m.getAnnotation(Order.class).value() + "-" + m.getName()).orElse("scenario");
        shoot(name);
        List<LogEntry> entries;
        try {
            entries = driver.manage().logs().get(LogType.BROWSER).getAll();
        } catch (RuntimeException e) {
            return; // a driver without logs: they are an aid, not the test
        }
        entries.forEach(e -> System.out.println("[browser " + name + "] " + e.getLevel() + " " + e.getMessage()));
        List<String> errors = entries.stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
                .map(LogEntry::getMessage)
                .filter(m -> !m.contains("Failed to load resource: the server responded with a status of"))
                .toList();
        assertEquals(List.of(), errors, "script errors in the console page");
    }

    @Test
    @Order(1)
    void create() {
        open("/new");
        type("new-key", KEY);
        type("new-value", "{\"n\":1}");
        click("create");

        wait.until(visibilityOfElementLocated(By.id("item-index")));
        Item stored = stored().orElseThrow(() -> new AssertionError("the Create form wrote nothing"));
        assertEquals("{\"n\":1}", stored.value());
        wait.until(textToBe(By.id("item-index"), String.valueOf(stored.index())));
        assertEquals("Created at index " + stored.index() + ".", text("notice"));
        assertEquals("{\"n\":1}", compactJson(text("item-value")));

        // Create again: create-only is refused (412) and shows what is stored, which stays as it was.
        open("/new");
        type("new-key", KEY);
        type("new-value", "{\"n\":99}");
        click("create");
        wait.until(visibilityOfElementLocated(By.id("exists")));
        assertEquals("{\"n\":1}", compactJson(text("exists-value")));
        assertEquals(String.valueOf(stored.index()), text("item-index"));
        assertEquals(stored, stored().orElseThrow());
    }

    @Test
    @Order(2)
    void edit() {
        Item before = stored().orElseThrow();
        openItem(before.index());
        setEditor("{\"n\":2}");
        click("save");

        wait.until(d -> text("notice").startsWith("Saved at index "));
        Item after = stored().orElseThrow();
        assertEquals("{\"n\":2}", after.value());
        assertTrue(after.index() > before.index(), "the save moved the index: " + before.index() + " -> " + after.index());
        assertEquals(before.createdIndex(), after.createdIndex());
        assertEquals(String.valueOf(after.index()), text("item-index"));
        assertEquals("{\"n\":2}", compactJson(text("item-value")));
    }

    @Test
    @Order(3)
    void conflictFromSecondTab() throws IOException {
        Item loaded = stored().orElseThrow();
        String tabA = driver.getWindowHandle();
        openItem(loaded.index());

        driver.switchTo().newWindow(WindowType.TAB);
        String tabB = driver.getWindowHandle();
        openItem(loaded.index());
        setEditor("{\"n\":3}");
        click("save");
        wait.until(d -> text("notice").startsWith("Saved at index "));
        Item savedByB = stored().orElseThrow();
        assertEquals("{\"n\":3}", savedByB.value());

        driver.switchTo().window(tabA);
        assertEquals(String.valueOf(loaded.index()), text("item-index"), "tab A still shows the index it loaded");
        setEditor("{\"n\":4}");
        click("save");

        wait.until(visibilityOfElementLocated(By.id("conflict")));
        assertEquals(String.valueOf(savedByB.index()), text("conflict-index"));
        assertEquals("{\"n\":3}", compactJson(text("conflict-current")));
        assertEquals("{\"n\":4}", compactJson(text("conflict-mine")));
        assertEquals("Overwrite at index " + savedByB.index(), text("overwrite"));
        assertEquals(savedByB, stored().orElseThrow(), "the refused save wrote nothing");
        shoot("3-conflict-panel");

        click("overwrite");
        wait.until(d -> text("notice").startsWith("Overwrote at index "));
        Item overwritten = stored().orElseThrow();
        assertEquals("{\"n\":4}", overwritten.value());
        assertTrue(overwritten.index() > savedByB.index());
        assertEquals(String.valueOf(overwritten.index()), text("item-index"));
        assertTrue(driver.findElements(By.id("conflict")).isEmpty(), "the conflict panel is gone after the overwrite");

        driver.switchTo().window(tabB);
        driver.close();
        driver.switchTo().window(tabA);
    }

    @Test
    @Order(4)
    void delete() {
        // A delete from a page that loaded an older index is refused; Reload shows the item as it is now.
        Item loaded = stored().orElseThrow();
        openItem(loaded.index());
        CompareExchangeResult moved = client.put(KEY, Map.of("n", 5), loaded.index());
        assertTrue(moved.successful());
        click("delete");
        click("confirm-delete");
        wait.until(visibilityOfElementLocated(By.id("conflict")));
        assertEquals("Delete at index " + moved.index(), text("overwrite"));
        assertEquals("{\"n\":5}", compactJson(text("conflict-current")));
        assertEquals(moved.item(), stored().orElseThrow(), "the refused delete deleted nothing");
        click("reload");
        wait.until(textToBe(By.id("item-index"), String.valueOf(moved.index())));
        assertTrue(driver.findElements(By.id("conflict")).isEmpty(), "Reload discards the conflict");
        assertEquals("{\"n\":5}", compactJson(text("item-value")));

        // Delete asks first, then deletes at the index it shows.
        click("delete");
        wait.until(visibilityOfElementLocated(By.id("confirm-delete")));
        assertEquals(Optional.of(moved.item()), stored(), "Delete asks first and writes nothing yet");
        click("confirm-delete");
        wait.until(d -> text("notice").startsWith("Deleted "));
        assertEquals(Optional.empty(), stored());
    }

    @Test
    @Order(5)
    void clusterViewAfterLeaderKill() {
        String leader = cluster.awaitLeader();
        if (leader.equals(consoleNode)) {
            consoleNode = follower();
        }
        open("/cluster");
        wait.until(d -> roles().size() == 3 && List.of(leader).equals(nodesIn("LEADER")));
        assertEquals(2, nodesIn("FOLLOWER").size(), () -> "roles: " + roles());
        assertEquals(leader, text("leader"));
        assertTrue(driver.findElement(By.cssSelector("tr[data-node='" + leader + "']")).getText().contains("leader"),
                "the leader's row is marked");

        cluster.stopNode(leader);

        new WebDriverWait(driver, Duration.ofSeconds(60)).until(d -> {
            Map<String, String> roles = roles();
            List<String> leaders = nodesIn("LEADER");
            return roles.size() == 3 && "UNREACHABLE".equals(roles.get(leader))
                    && leaders.size() == 1 && !leaders.contains(leader);
        });
        String newLeader = nodesIn("LEADER").get(0);
        assertNotEquals(leader, newLeader);
        assertFalse(text("cluster-table").isEmpty());
        assertFalse(driver.findElement(By.cssSelector("tr[data-node='" + leader + "'] td.err")).getText().isBlank(),
                "the stopped node's row says why it did not answer");
    }

    @Test
    @Order(6)
    void expiryCountsDownOnClusterTime() {
        String key = "console/ttl";
        open("/new");
        type("new-key", key);
        type("new-value", "{\"t\":1}");
        type("new-ttl", "1h");
        click("create");

        // Counted on cluster time (learned from /v1/status: no "browser clock" note), once a second.
        wait.until(textMatches(By.id("item-expiry"), Pattern.compile("^expires in (59 min \\d+ s|60 min 0 s)$")));
        String first = text("item-expiry");
        wait.until(d -> !text("item-expiry").equals(first) && text("item-expiry").startsWith("expires in 59 min"));
        Item created = client.get(key).orElseThrow();
        assertTrue(created.expiresAt() > 0, "created with a ttl: " + created);

        // An edit sends the metadata back, @expires included: the expiry stays.
        setEditor("{\"t\":2}");
        click("save");
        wait.until(d -> text("notice").startsWith("Saved at index "));
        Item edited = client.get(key).orElseThrow();
        assertEquals("{\"t\":2}", edited.value());
        assertEquals(created.expiresAt(), edited.expiresAt(), "an edit keeps the expiry");
    }

    @Test
    @Order(7)
    void errorsShowTheApiMessage() {
        open("/new");
        type("new-key", "console/bad");
        type("new-value", "{\"b\":1}");
        type("new-ttl", "soon");
        click("create");

        wait.until(visibilityOfElementLocated(By.id("error")));
        assertTrue(text("error").contains("400"), () -> "error shown: " + text("error"));
        assertFalse(text("error-message").isBlank(), "the API's message is shown");
        assertEquals(Optional.empty(), client.get("console/bad"));
    }

    @Test
    @Order(8)
    void itemsPageByPrefix() throws IOException {
        for (int i = 0; i < 30; i++) {
            assertTrue(client.put(String.format("console/list/%02d", i), Map.of("i", i), 0).successful());
        }
        open("/items");
        type("prefix", "console/list/");
        click("list");
        wait.until(d -> listedKeys().size() == 30);
        new Select(driver.findElement(By.id("page-size"))).selectByValue("25");
        wait.until(d -> listedKeys().size() == 25 && listedKeys().get(0).equals("console/list/00"));
        assertEquals("console/list/24", listedKeys().get(24));
        assertTrue(driver.findElement(By.id("next")).isEnabled(), "a next page exists");

        click("next");
        wait.until(d -> listedKeys().equals(List.of("console/list/25", "console/list/26", "console/list/27",
                "console/list/28", "console/list/29")));
        assertFalse(driver.findElement(By.id("next")).isEnabled(), "the last page has no next");
        assertEquals("26–30", text("page-info"));
        shoot("8-items-second-page");

        click("prev");
        wait.until(d -> listedKeys().size() == 25 && listedKeys().get(0).equals("console/list/00"));

        driver.findElement(By.linkText("console/list/07")).click();
        Item seven = client.get("console/list/07").orElseThrow();
        wait.until(textToBe(By.id("item-index"), String.valueOf(seven.index())));
        assertEquals("{\"i\":7}", compactJson(text("item-value")));
    }

    // ---- helpers

    /** The keys the items table lists, in order. */
    @SuppressWarnings("unchecked")
    private static List<String> listedKeys() {
        return (List<String>) ((JavascriptExecutor) driver).executeScript(
                "return [...document.querySelectorAll('#items-table tr[data-key]')].map(r => r.dataset.key);");
    }

    /** A node that is not the leader now. */
    private static String follower() {
        String leader = cluster.awaitLeader();
        return cluster.nodeIds().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
    }

    private static Optional<Item> stored() {
        return client.get(KEY);
    }

    /** Loads the console afresh (not a same-document hash change) at {@code hash}. */
    private static void open(String hash) {
        driver.get("about:blank");
        driver.get(cluster.httpUrl(consoleNode) + "/#" + hash);
    }

    private static void openItem(long index) {
        open("/item/" + KEY);
        wait.until(textToBe(By.id("item-index"), String.valueOf(index)));
    }

    private static void type(String id, String text) {
        WebElement field = wait.until(visibilityOfElementLocated(By.id(id)));
        field.clear();
        field.sendKeys(text);
    }

    private static void setEditor(String json) {
        type("value-editor", json);
    }

    private static void click(String id) {
        wait.until(visibilityOfElementLocated(By.id(id))).click();
    }

    /**
     * The rendered text of the element with this id, or "" while there is none; read in one script, since
     * the page replaces elements as it re-renders (a found element may be gone by the time it is read).
     */
    private static String text(String id) {
        Object text = ((JavascriptExecutor) driver).executeScript(
                "const el = document.getElementById(arguments[0]); return el ? el.innerText.trim() : '';", id);
        return text == null ? "" : (String) text;
    }

    /** JSON as the page shows it (pretty-printed), without its layout whitespace; values here hold no spaces. */
    private static String compactJson(String shown) {
        return shown.replaceAll("\\s+", "");
    }

    /** Node id to the role its row of the cluster table shows, read in one go (the table is redrawn every 2 s). */
    @SuppressWarnings("unchecked")
    private static Map<String, String> roles() {
        return (Map<String, String>) ((JavascriptExecutor) driver).executeScript(
                "const roles = {};"
                        + "for (const row of document.querySelectorAll('#cluster-table tr[data-node]')) {"
                        + "  roles[row.dataset.node] = row.querySelector('[data-role]').dataset.role;"
                        + "}"
                        + "return roles;");
    }

    private static List<String> nodesIn(String role) {
        return roles().entrySet().stream().filter(e -> role.equals(e.getValue())).map(Map.Entry::getKey).sorted().toList();
    }

    private static void shoot(String name) throws IOException {
        Path shots = Path.of(System.getProperty("ratchet.home", ".."), "node", "target", "console-screenshots");
        Files.createDirectories(shots);
        Path shot = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE).toPath();
        Files.copy(shot, shots.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    }
}
