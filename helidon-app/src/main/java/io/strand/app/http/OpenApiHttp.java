package io.strand.app.http;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Serves {@code GET /openapi}: the OpenAPI 3.1 document written by hand next to docs/api.md
 * ({@code META-INF/openapi.yaml} in the jar), no token needed. Immutable after construction,
 * so thread-safe. {@code OpenApiIT} keeps it in step with the routes the server registers.
 */
public final class OpenApiHttp implements Handler {
    /** Where the document lives on the class path. */
    public static final String RESOURCE = "/META-INF/openapi.yaml";
    private final byte[] document;

    public OpenApiHttp() {
        try (InputStream in = OpenApiHttp.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the class path");
            }
            document = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void handle(ServerRequest req, ServerResponse res) {
        res.header(HeaderNames.CONTENT_TYPE, "application/yaml; charset=utf-8");
        res.send(document);
    }
}
