package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strand.app.auth.JwtAuthenticator;
import io.strand.app.testing.Http;
import io.strand.app.testing.TestServer;
import io.strand.app.testing.Tokens;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console in a real browser: Debian's headless Chromium driven by its chromedriver
 * (Selenium). Logs in, lists workspaces, opens a log and sees entries appended meanwhile arrive
 * live, pages back into the cold tier, pauses and resumes, opens a doc, and shows a 401 for a bad
 * token; a reload is answered from the browser's cache (304), entry text cannot reorder the page
 * (bidi controls), and the live tail reconnects by itself across a server restart. Screenshots go to
 * {@code target/console-screenshots/}.
 */
@Timeout(300)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserIT {
    static final Path CHROMIUM = onPath("chromium");
    static final Path CHROMEDRIVER = onPath("chromedriver");
    static final Path SHOTS = Path.of("target", "console-screenshots");

    @TempDir
    static Path dir;
    static JwtAuthenticator auth;
    static TestServer server;
    static Http root;
    static String rootToken;
    static WebDriver browser;
    static WebDriverWait wait;

    @BeforeAll
    static void start() throws Exception {
        Assumptions.assumeTrue(CHROMIUM != null && CHROMEDRIVER != null,
                "headless Chromium is not installed (no chromium or chromedriver on PATH; Debian packages chromium and "
                        + "chromium-driver, which .ci/run installs): the console browser test cannot run");
        auth = JwtAuthenticator.open(dir);
        server = TestServer.start(dir, Map.of(), auth);
        rootToken = Tokens.root(dir);
        root = server.http.withToken(rootToken);
        append(1, 100);
        Http.Reply roll = root.post("/v1/ws/acme/logs/chat/cold/roll", "");
        assertEquals(200, roll.status(), roll.body());
        append(101, 120);
        assertEquals(200, root.put("/v1/ws/acme/docs/settings", "{\"value\":{\"theme\":\"dark\",\"limits\":{\"rate\":10,\"burst\":[1,2,3]}}}").status());
        assertEquals(200, root.put("/v1/ws/acme/docs/settings", "{\"value\":{\"theme\":\"light\",\"limits\":{\"rate\":10,\"burst\":[1,2,3]}}}").status());
        for (int batch = 0; batch < 3; batch++) {
            StringBuilder entries = new StringBuilder("{\"entries\":[");
            for (int i = 0; i < 1000; i++) {
                entries.append(i == 0 ? "" : ",").append("{\"data\":{\"i\":").append(batch * 1000 + i + 1).append("}}");
            }
            assertEquals(200, root.post("/v1/ws/acme/logs/big/entries", entries.append("]}").toString()).status());
        }
        assertEquals(200, root.post("/v1/ws/billing/logs/invoices/entries", "{\"data\":{\"total\":42}}").status());
        // text that must stay text: markup, and a right-to-left override that would draw later fields reversed
        assertEquals(200, root.post("/v1/ws/acme/logs/evil/entries",
                "{\"key\":\"<b>k</b>\",\"data\":{\"html\":\"<img src=x onerror=alert(1)></script>\",\"uni\":\"RTL \\u202e reversed\",\"n\":21}}").status());
        Files.createDirectories(SHOTS);
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900",
                "--user-data-dir=" + dir.resolve("chromium-profile"));
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
        wait = new WebDriverWait(browser, Duration.ofSeconds(20));
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.quit();
        }
        if (server != null) {
            server.close();
        }
        if (auth != null) {
            auth.close();
        }
    }

    /** The executable {@code name} in a PATH directory, null when none has it. */
    static Path onPath(String name) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
            Path p = Path.of(d.isEmpty() ? "." : d, name);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    static void append(int from, int to) {
        for (int i = from; i <= to; i++) {
            Http.Reply r = root.post("/v1/ws/acme/logs/chat/entries",
                    "{\"key\":\"user-" + (i % 7) + "\",\"data\":{\"n\":" + i + ",\"text\":\"message " + i + "\",\"tags\":[\"a\",\"b\"]}}");
            assertEquals(200, r.status(), r.body());
        }
    }

    static void shot(String name) throws IOException {
        File png = ((ChromeDriver) browser).getScreenshotAs(OutputType.FILE);
        Files.copy(png.toPath(), SHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    }

    static WebElement seen(By by) {
        return wait.until(ExpectedConditions.visibilityOfElementLocated(by));
    }

    static By entry(int seq) {
        return By.cssSelector("#entries li[data-seq='" + seq + "']");
    }

    static void login(String token) {
        WebElement box = seen(By.id("token"));
        box.clear();
        box.sendKeys(token);
        browser.findElement(By.id("login-button")).click();
    }

    @Test
    @Order(1)
    void consoleWalkthrough() throws Exception {
        // the page itself is static and needs no token; /v1 still does
        assertEquals(200, server.http.get("/console/").status());
        assertEquals(200, server.http.get("/console/console.js").status());
        assertEquals(401, server.http.get("/v1/ws").status());
        java.net.http.HttpResponse<String> bare = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(server.url() + "/console")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertTrue(bare.statusCode() == 200 || bare.statusCode() / 100 == 3, "/console: " + bare.statusCode() + " " + bare.headers().map());
        Http.Reply missing = server.http.get("/console/nope.js");
        assertEquals(404, missing.status(), missing.body());
        // a reload: the browser asks with the validators it has, and the answer is 304, not an error
        java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
        java.net.http.HttpResponse<String> first = client.send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create(server.url() + "/console/")).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        String etag = first.headers().firstValue("ETag").orElseThrow(() -> new AssertionError("no ETag: " + first.headers().map()));
        // a second past Last-Modified (its header has whole seconds, the file's time has milliseconds)
        String modified = java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(java.time.ZonedDateTime.parse(
                first.headers().firstValue("Last-Modified").orElseThrow(), java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME)
                .plusSeconds(1));
        for (String[] validator : new String[][] {{"If-None-Match", etag}, {"If-Modified-Since", modified}}) {
            java.net.http.HttpResponse<String> again = client.send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create(server.url() + "/console/")).header(validator[0], validator[1]).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(304, again.statusCode(), validator[0] + ": " + again.body());
        }

        browser.get(server.url() + "/console/");
        seen(By.id("login"));
        login("not.a-valid-token");
        WebElement error = seen(By.id("login-error"));
        assertTrue(error.getText().startsWith("401 unauthorized"), error.getText());
        shot("01-login-401");

        login(rootToken);
        seen(By.cssSelector("#ws-rows a[href='#/ws/acme']"));
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("m-health"), "UP"));
        assertTrue(browser.findElement(By.id("ws-rows")).getText().contains("billing"));
        shot("02-workspaces");

        browser.navigate().refresh(); // the browser revalidates the page it has: still the console, still signed in
        seen(By.cssSelector("#ws-rows a[href='#/ws/acme']"));
        browser.findElement(By.cssSelector("#ws-rows a[href='#/ws/acme']")).click();
        seen(By.cssSelector("#log-rows tr[data-log='chat']"));
        seen(By.cssSelector("#log-rows tr[data-log='big']"));
        seen(By.cssSelector("#doc-rows tr[data-doc='settings']"));
        String chatRow = browser.findElement(By.cssSelector("#log-rows tr[data-log='chat']")).getText();
        assertTrue(chatRow.contains("120") && chatRow.contains("1–120"), chatRow);
        assertTrue(browser.findElement(By.cssSelector("#doc-rows tr[data-doc='settings']")).getText().contains("2"));
        shot("03-workspace");

        // the log: the last entries, then the live tail
        browser.findElement(By.cssSelector("#log-rows tr[data-log='chat'] a")).click();
        seen(By.id("caught-up"));
        seen(entry(120));
        wait.until(ExpectedConditions.textToBe(By.id("m-subs"), "1")); // the metrics bar, refreshed live
        assertEquals(0, browser.findElements(entry(100)).size(), "only the newest entries at first");
        assertTrue(browser.findElement(By.id("log-cold")).getText().contains("1 – 100"), browser.findElement(By.id("log-cold")).getText());
        append(121, 123);
        seen(entry(123));
        assertTrue(browser.findElement(entry(123)).getText().contains("\"text\": \"message 123\""), "entry JSON pretty-printed");
        shot("04-log-live");

        // page back: the hot page, then into the cold tier
        browser.findElement(By.id("older")).click();
        seen(entry(51));
        browser.findElement(By.id("older")).click();
        seen(entry(1));
        wait.until(ExpectedConditions.invisibilityOfElementLocated(By.id("older")));
        ((org.openqa.selenium.JavascriptExecutor) browser).executeScript("window.scrollTo(0, 0)");
        shot("05-log-paged-back");

        // pause: nothing arrives; resume: it does
        browser.findElement(By.id("tail-toggle")).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("tail-state"), "paused at seq 123"));
        append(124, 124);
        Http.Reply head = root.get("/v1/ws/acme/logs/chat");
        assertEquals(124, head.json().get("head").asLong());
        assertEquals(0, browser.findElements(entry(124)).size(), "paused");
        browser.findElement(By.id("tail-toggle")).click();
        seen(entry(124));
        seen(By.id("caught-up"));

        // jump to a seq: replays from there
        WebElement jump = browser.findElement(By.id("jump-to"));
        jump.sendKeys("60");
        jump.submit();
        seen(By.id("caught-up"));
        seen(entry(60));
        assertEquals(0, browser.findElements(entry(59)).size());

        // jump to a time: from the first entry at or after it. Serial appends can share a millisecond, so
        // the target is the first entry from seq 40 on whose ts is later than its predecessor's.
        com.fasterxml.jackson.databind.JsonNode page = root.get("/v1/ws/acme/logs/chat/entries?from=39&limit=60").json().get("entries");
        int at = 1;
        while (at < page.size() - 1 && page.get(at).get("ts").asLong() == page.get(at - 1).get("ts").asLong()) {
            at++;
        }
        long target = page.get(at).get("seq").asLong();
        long ts = page.get(at).get("ts").asLong();
        jump = browser.findElement(By.id("jump-to"));
        jump.clear();
        jump.sendKeys(java.time.Instant.ofEpochMilli(ts).toString());
        jump.submit();
        seen(entry((int) target));
        seen(By.id("caught-up"));
        assertEquals(0, browser.findElements(entry((int) target - 1)).size(), "entries before the time are not shown");
        shot("06-log-jump");

        // a longer replay: the progress bar fills, then marks the catch-up
        browser.get(server.url() + "/console/#/ws/acme/log/big");
        seen(entry(3000));
        jump = browser.findElement(By.id("jump-to"));
        jump.sendKeys("1");
        jump.submit();
        wait.until(ExpectedConditions.textToBe(By.id("progress-text"), "caught up: replayed seqs 1 – 3,000"));
        seen(entry(3000));
        seen(By.id("caught-up"));
        assertEquals(0, browser.findElements(entry(1)).size(), "the page keeps the newest 2000 entries");
        shot("07-log-replayed");

        // entry text stays text: markup is not run, a bidi override is shown as its escape
        browser.get(server.url() + "/console/#/ws/acme/log/evil");
        String evil = seen(entry(1)).getText();
        assertTrue(evil.contains("<img src=x onerror=alert(1)></script>") && evil.contains("key <b>k</b>"), evil);
        assertTrue(evil.contains("RTL \\u202e reversed") && !evil.contains("\u202e"), "the override is shown, not obeyed: " + evil);
        shot("07b-log-text-stays-text");

        // the doc
        browser.get(server.url() + "/console/#/ws/acme/doc/settings");
        WebElement json = seen(By.id("doc-json"));
        wait.until(ExpectedConditions.textToBePresentInElement(json, "\"theme\": \"light\""));
        assertEquals("2", browser.findElement(By.id("doc-version")).getText());
        shot("08-doc");

        // a workspace token sees its own workspace only
        browser.findElement(By.id("logout")).click();
        login(AuthIT.mint(root, "billing", "read", 600).get("token").asText());
        seen(By.cssSelector("#ws-rows a[href='#/ws/billing']"));
        assertEquals(1, browser.findElements(By.cssSelector("#ws-rows tr")).size());
        shot("09-workspace-token");
    }

    /** The live tail survives a server restart: the page reconnects by itself and resumes where it was, missing nothing. */
    @Test
    @Order(2)
    void theLiveTailShouldReconnectAfterAServerRestart() throws Exception {
        browser.get(server.url() + "/console/");
        if (!browser.findElements(By.id("logout")).isEmpty() && browser.findElement(By.id("logout")).isDisplayed()) {
            browser.findElement(By.id("logout")).click();
        }
        login(rootToken);
        seen(By.cssSelector("#ws-rows a[href='#/ws/acme']"));
        browser.get(server.url() + "/console/#/ws/acme/log/chat");
        seen(By.id("caught-up"));
        long head = root.get("/v1/ws/acme/logs/chat").json().get("head").asLong();
        seen(entry((int) head));

        String port = server.url().substring(server.url().lastIndexOf(':') + 1);
        server.close();
        wait.until(ExpectedConditions.textMatches(By.id("tail-state"), java.util.regex.Pattern.compile("disconnected.*reconnecting")));
        shot("10-tail-disconnected");
        server = TestServer.start(dir, Map.of("STRAND_PORT", port), auth);
        root = server.http.withToken(rootToken);
        new WebDriverWait(browser, Duration.ofSeconds(40)).until(ExpectedConditions.textToBe(By.id("tail-state"), "live"));
        append((int) head + 1, (int) head + 3);
        seen(entry((int) head + 3));
        for (int seq = (int) head - 2; seq <= head + 3; seq++) {
            assertEquals(1, browser.findElements(entry(seq)).size(), "seq " + seq + " shown exactly once");
        }
        shot("11-tail-reconnected");

        // a phone-sized window: the page does not grow wider than the window (wide tables scroll inside it)
        browser.manage().window().setSize(new org.openqa.selenium.Dimension(400, 860));
        for (String view : new String[] {"#/ws/acme", "#/ws/acme/log/chat"}) {
            browser.get(server.url() + "/console/" + view);
            seen(By.id(view.contains("/log/") ? "caught-up" : "log-rows"));
            Object width = ((org.openqa.selenium.JavascriptExecutor) browser).executeScript(
                    "return [document.documentElement.scrollWidth, window.innerWidth]");
            java.util.List<?> w = (java.util.List<?>) width;
            assertTrue(((Number) w.get(0)).longValue() <= ((Number) w.get(1)).longValue(), view + ": page " + w.get(0)
                    + " px wide in a " + w.get(1) + " px window");
            shot("12-narrow-" + (view.contains("/log/") ? "log" : "workspace"));
        }
        browser.manage().window().setSize(new org.openqa.selenium.Dimension(1280, 900));
    }
}
