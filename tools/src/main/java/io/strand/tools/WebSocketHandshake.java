package io.strand.tools;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.random.RandomGenerator;

/**
 * The client side of the HTTP/1.1 upgrade (RFC 6455 §4.1): sends {@code GET} with a random
 * {@code Sec-WebSocket-Key} (and {@code Authorization: Bearer} when a token is given), then reads
 * the answer from the same buffered stream the frame reader goes on with, so a frame sent right
 * behind the 101 is not lost. Anything but a 101 whose {@code Sec-WebSocket-Accept} matches the key is a
 * {@link Refused} carrying the status and the start of the body.
 */
final class WebSocketHandshake {
    private static final String GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    private static final int MAX_HEAD = 16 * 1024;
    private static final int MAX_BODY = 4 * 1024;

    /** The server did not upgrade: its HTTP status (or 101 with a bad answer) and body. */
    static final class Refused extends IOException {
        final int status;

        Refused(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    private WebSocketHandshake() {
    }

    /** Upgrades the connection behind {@code out}/{@code in} to a WebSocket for {@code uri}. */
    static void upgrade(URI uri, String token, OutputStream out, InputStream in, RandomGenerator random) throws IOException {
        byte[] nonce = new byte[16];
        random.nextBytes(nonce);
        String key = Base64.getEncoder().encodeToString(nonce);
        out.write(request(uri, key, token).getBytes(StandardCharsets.ISO_8859_1));
        out.flush();

        String head = readHead(in);
        String[] lines = head.split("\r\n");
        String[] status = lines[0].split(" ", 3);
        if (status.length < 2 || !status[0].startsWith("HTTP/1.")) {
            throw new Refused(0, "not an HTTP answer: " + lines[0]);
        }
        int code;
        try {
            code = Integer.parseInt(status[1]);
        } catch (NumberFormatException e) {
            throw new Refused(0, "not an HTTP answer: " + lines[0]);
        }
        Map<String, String> headers = new HashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
            }
        }
        if (code != 101) {
            throw new Refused(code, "HTTP " + code + readBody(in, headers));
        }
        if (!"websocket".equalsIgnoreCase(headers.get("upgrade"))
                || !headers.getOrDefault("connection", "").toLowerCase(Locale.ROOT).contains("upgrade")) {
            throw new Refused(code, "101 without Upgrade: websocket / Connection: Upgrade");
        }
        if (!accept(key).equals(headers.get("sec-websocket-accept"))) {
            throw new Refused(code, "Sec-WebSocket-Accept does not match the key");
        }
        if (headers.containsKey("sec-websocket-extensions")) {
            throw new Refused(code, "the server chose an extension that was not offered: " + headers.get("sec-websocket-extensions"));
        }
    }

    static String request(URI uri, String key, String token) {
        String path = (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        StringBuilder r = new StringBuilder(256)
                .append("GET ").append(path).append(" HTTP/1.1\r\n")
                .append("Host: ").append(uri.getHost()).append(uri.getPort() < 0 ? "" : ":" + uri.getPort()).append("\r\n")
                .append("Upgrade: websocket\r\n")
                .append("Connection: Upgrade\r\n")
                .append("Sec-WebSocket-Key: ").append(key).append("\r\n")
                .append("Sec-WebSocket-Version: 13\r\n");
        if (token != null) {
            r.append("Authorization: Bearer ").append(token).append("\r\n");
        }
        return r.append("\r\n").toString();
    }

    /** {@code base64(SHA-1(key + GUID))}: what a server that understood the request answers. */
    static String accept(String key) {
        try {
            byte[] sha1 = MessageDigest.getInstance("SHA-1").digest((key + GUID).getBytes(StandardCharsets.ISO_8859_1));
            return Base64.getEncoder().encodeToString(sha1);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is missing from this JDK", e);
        }
    }

    /** The status line and headers, up to and without the blank line. */
    private static String readHead(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder(256);
        while (head.length() < MAX_HEAD) {
            int b = in.read();
            if (b < 0) {
                throw new Refused(0, "connection closed during the upgrade" + (head.isEmpty() ? "" : " after: " + head));
            }
            head.append((char) b);
            int n = head.length();
            if (n >= 4 && head.charAt(n - 1) == '\n' && head.charAt(n - 2) == '\r' && head.charAt(n - 3) == '\n'
                    && head.charAt(n - 4) == '\r') {
                return head.substring(0, n - 4);
            }
        }
        throw new Refused(0, "upgrade answer over " + MAX_HEAD + " bytes");
    }

    /** ": body" (shortened) when the refusal says how long its body is, else "". */
    private static String readBody(InputStream in, Map<String, String> headers) {
        try {
            int length = Integer.parseInt(headers.getOrDefault("content-length", "0").trim());
            byte[] body = in.readNBytes(Math.min(length, MAX_BODY));
            String text = new String(body, StandardCharsets.UTF_8).strip();
            return text.isEmpty() ? "" : ": " + text;
        } catch (NumberFormatException | IOException e) {
            return "";
        }
    }
}
