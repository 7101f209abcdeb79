package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.app.reliability.FaultTest;
import io.strand.app.reliability.ReliabilityReport;
import io.strand.app.reliability.ReliabilityRow;
import io.strand.app.reliability.Scenario;
import io.strand.app.testing.Http;
import io.strand.app.testing.WsClient;
import io.strand.core.Json;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Thousands of idle WebSocket connections (upgraded, then silent) on a server in a child JVM: every
 * one is accepted (the per-workspace cap is 10,000), the server keeps serving new clients over HTTP
 * and WebSocket, a sample of the idle sockets still answers a ping, and the row reports the
 * server's resident memory per socket.
 */
@Timeout(300)
@FaultTest
class IdleSocketsIT {
    private static final int SOCKETS = ReliabilityReport.loops(2_000, 5_000);

    @TempDir
    Path dir;

    @Test
    @Scenario("idle WebSocket connections")
    void thousandsOfIdleSocketsShouldAllBeAcceptedAndTheServerKeepServing(ReliabilityRow row) throws Exception {
        try (ServerProcess child = ServerProcess.start(dir, List.of("--durability", "os", "--auth", "false"), List.of())) {
            String wsUrl = child.url.replace("http://", "ws://") + "/v1/ws/idle/socket";
            int port = Integer.parseInt(child.url.substring(child.url.lastIndexOf(':') + 1));
            Http http = new Http(child.url, null);
            serves(http, wsUrl, "before"); // warm: the upgrade path is loaded before the baseline
            long[] before = rssKiB(child);

            List<Socket> idle = Collections.synchronizedList(new ArrayList<>());
            long t0 = System.nanoTime();
            try (ExecutorService pool = Executors.newFixedThreadPool(8)) {
                List<Future<?>> opened = new ArrayList<>();
                for (int i = 0; i < SOCKETS; i++) {
                    opened.add(pool.submit(() -> {
                        idle.add(upgrade(port));
                        return null;
                    }));
                }
                for (Future<?> f : opened) {
                    f.get();
                }
            }
            double openSeconds = (System.nanoTime() - t0) / 1e9;
            try {
                assertEquals(SOCKETS, idle.size());
                long[] after = rssKiB(child);
                serves(http, wsUrl, "with " + SOCKETS + " idle sockets");
                for (int i = 0; i < idle.size(); i += idle.size() / 20) { // a sample of the idle ones still answers
                    JsonNode pong = ping(idle.get(i), i);
                    assertTrue(pong.get("ok").asBoolean(), pong.toString());
                }
                double perSocket = (after[0] - before[0]) / (double) SOCKETS;
                double anonPerSocket = (after[1] - before[1]) / (double) SOCKETS;
                String summary = String.format("%d sockets opened in %.1f s; server RSS +%.1f KiB per socket (anon +%.1f KiB)",
                        SOCKETS, openSeconds, perSocket, anonPerSocket);
                System.out.println("IdleSocketsIT: " + summary + "; RSS " + (before[0] >> 10) + "→" + (after[0] >> 10) + " MiB");
                row.runs(1).operations(SOCKETS).note(summary);
            } finally {
                for (Socket s : idle) {
                    s.close();
                }
            }
            serves(http, wsUrl, "after the idle sockets closed");
        }
    }

    /** A new WebSocket client pings and an HTTP append is acknowledged. */
    private static void serves(Http http, String wsUrl, String when) {
        try (WsClient c = WsClient.connect(wsUrl)) {
            assertTrue(c.reply(c.request("ping", ""), 10_000).get("ok").asBoolean(), when);
        }
        Http.Reply r = http.post("/v1/ws/idle/logs/l/entries", "{\"data\":1}");
        assertEquals(200, r.status(), when + ": " + r.body());
    }

    /** Upgrades a plain socket to a WebSocket and leaves it open, reading nothing. */
    private static Socket upgrade(int port) throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
        s.setSoTimeout(30_000);
        OutputStream out = s.getOutputStream();
        out.write(("GET /v1/ws/idle/socket HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: MDEyMzQ1Njc4OWFiY2RlZg==\r\nSec-WebSocket-Version: 13\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        DataInputStream in = new DataInputStream(s.getInputStream());
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            head.append((char) in.readUnsignedByte());
        }
        if (!head.toString().startsWith("HTTP/1.1 101")) {
            s.close();
            throw new IOException("upgrade refused: " + head);
        }
        return s;
    }

    /** Sends a ping request as a masked text frame (mask key 0) and reads the server's reply frame. */
    private static JsonNode ping(Socket s, int id) throws IOException {
        byte[] payload = ("{\"id\":" + id + ",\"op\":\"ping\"}").getBytes(StandardCharsets.UTF_8);
        OutputStream out = s.getOutputStream();
        byte[] frame = new byte[6 + payload.length];
        frame[0] = (byte) 0x81;
        frame[1] = (byte) (0x80 | payload.length);
        System.arraycopy(payload, 0, frame, 6, payload.length);
        out.write(frame);
        out.flush();
        DataInputStream in = new DataInputStream(s.getInputStream());
        int b0 = in.readUnsignedByte();
        int len = in.readUnsignedByte() & 0x7f;
        if (len == 126) {
            len = in.readUnsignedShort();
        } else if (len == 127) {
            len = (int) in.readLong();
        }
        byte[] body = in.readNBytes(len);
        assertEquals(0x1, b0 & 0x0f, "a text frame");
        return Json.parse(new String(body, StandardCharsets.UTF_8));
    }

    /** {VmRSS, RssAnon} of the child in KiB. */
    private static long[] rssKiB(ServerProcess child) throws IOException {
        long rss = -1;
        long anon = -1;
        for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(child.process.pid()), "status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = Long.parseLong(line.replaceAll("\\D", ""));
            } else if (line.startsWith("RssAnon:")) {
                anon = Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        return new long[] {rss, anon};
    }
}
