package io.strand.app.http;

import io.helidon.http.HttpPrologue;
import io.helidon.webserver.accesslog.AccessLogContext;
import io.helidon.webserver.accesslog.AccessLogEntry;
import io.helidon.webserver.accesslog.HostLogEntry;
import io.helidon.webserver.accesslog.AccessLogFeature;
import io.helidon.webserver.accesslog.SizeLogEntry;
import io.helidon.webserver.accesslog.StatusLogEntry;
import io.helidon.webserver.accesslog.TimeTakenLogEntry;
import io.helidon.webserver.accesslog.TimestampLogEntry;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;

/**
 * The access log's request line ({@code "GET /ds/acme/s?offset=-1&token=REDACTED HTTP/1.1"}) with
 * every credential-bearing query value replaced: {@code ?token=} is accepted on the WebSocket
 * upgrade and {@code /ds/} paths, and a log line must never hold a usable token. The access log
 * has no header entries, so {@code Authorization} never reaches it. Stateless, so thread-safe.
 */
public final class RedactedRequestLine implements AccessLogEntry {
    /** Query parameters whose values are credentials. */
    static final Set<String> SECRET_PARAMS = Set.of("token", "access_token");
    public static final String REDACTED = "REDACTED";

    /**
     * Helidon's access log in its default layout ({@code %h %u %t %r %s %b %D}: host, user, time,
     * request line, status, bytes, microseconds) with this request line, on logger
     * {@code io.helidon.webserver.AccessLog}.
     */
    public static AccessLogFeature feature() {
        return AccessLogFeature.builder()
                .addEntry(HostLogEntry.create())
                .addEntry(ctx -> "-")
                .addEntry(TimestampLogEntry.create())
                .addEntry(new RedactedRequestLine())
                .addEntry(StatusLogEntry.create())
                .addEntry(SizeLogEntry.create())
                .addEntry(TimeTakenLogEntry.create())
                .build();
    }

    @Override
    public String apply(AccessLogContext context) {
        HttpPrologue p = context.serverRequest().prologue();
        String query = p.query().rawValue();
        return "\"" + p.method().text() + " " + p.uriPath().rawPath() + (query.isEmpty() ? "" : "?" + redact(query)) + " "
                + p.protocol() + "/" + p.protocolVersion() + "\"";
    }

    /** {@code rawQuery} with the value of every {@link #SECRET_PARAMS} parameter replaced. */
    static String redact(String rawQuery) {
        StringBuilder sb = new StringBuilder();
        for (String pair : rawQuery.split("&", -1)) {
            if (!sb.isEmpty()) {
                sb.append('&');
            }
            int eq = pair.indexOf('=');
            String rawName = eq < 0 ? pair : pair.substring(0, eq);
            String name;
            try {
                name = URLDecoder.decode(rawName, StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
            } catch (IllegalArgumentException e) {
                name = rawName.toLowerCase(Locale.ROOT);
            }
            sb.append(SECRET_PARAMS.contains(name) ? rawName + "=" + REDACTED : pair);
        }
        return sb.toString();
    }
}
