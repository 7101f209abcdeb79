package io.strand.app.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.strand.core.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * HTTP/1.1 by hand over one TCP connection, for requests a well-behaved client refuses to send
 * (bad request lines, oversized heads, partial headers) and for answers sent outside routing.
 */
public final class RawHttp {
    private RawHttp() {
    }

    /** One parsed answer: status, the head as text (lower-cased names) and the body. */
    public record Answer(int status, String head, String body) {
        public String errorCode() {
            JsonNode json = json();
            return json == null ? "" : json.path("error").path("code").asText();
        }

        public JsonNode json() {
            return body.isEmpty() ? null : Json.parse(body);
        }

        public boolean hasHeader(String nameAndValue) {
            return head.toLowerCase(Locale.ROOT).contains("\r\n" + nameAndValue.toLowerCase(Locale.ROOT));
        }
    }

    /** Sends {@code request} as is on a new connection to {@code baseUrl}'s host and port, and reads one answer. */
    public static Answer exchange(String baseUrl, String request) throws IOException {
        return exchange(baseUrl, request.getBytes(StandardCharsets.ISO_8859_1));
    }

    public static Answer exchange(String baseUrl, byte[] request) throws IOException {
        try (Socket s = connect(baseUrl, null)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(request);
            s.getOutputStream().flush();
            return read(s.getInputStream());
        }
    }

    /** A connection to {@code baseUrl}, from {@code localAddress} when not null (any 127.x.y.z on loopback). */
    public static Socket connect(String baseUrl, String localAddress) throws IOException {
        URI uri = URI.create(baseUrl);
        Socket s = new Socket();
        if (localAddress != null) {
            s.bind(new InetSocketAddress(localAddress, 0));
        }
        s.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 5_000);
        return s;
    }

    /** Reads one answer: the head up to the blank line, then Content-Length bytes of body. */
    public static Answer read(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed after " + head.size() + " bytes of head: " + head);
            }
            head.write(b);
            matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        String text = head.toString(StandardCharsets.ISO_8859_1);
        int status = Integer.parseInt(text.substring(9, 12));
        int length = 0;
        for (String line : text.split("\r\n")) {
            if (line.regionMatches(true, 0, "content-length:", 0, 15)) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        return new Answer(status, text, new String(in.readNBytes(length), StandardCharsets.UTF_8));
    }
}
