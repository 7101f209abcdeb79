package io.strand.app.testing;

import io.strand.app.ServerConfig;
import io.strand.app.StrandServer;
import io.strand.app.auth.Authenticator;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** A real server on a random loopback port with a temp data dir. */
public final class TestServer implements AutoCloseable {
    public final StrandServer server;
    public final Http http;

    private TestServer(StrandServer server) {
        this.server = server;
        this.http = new Http(server.url(), null);
    }

    public static TestServer start(Path dataDir, Map<String, String> extra) {
        return start(dataDir, extra, Authenticator.OPEN);
    }

    public static TestServer start(Path dataDir, Map<String, String> extra, Authenticator auth) {
        return start(dataDir, extra, auth, null);
    }

    /** As above, free disk space read from {@code freeSpace} when not null (a simulated full disk). */
    public static TestServer start(Path dataDir, Map<String, String> extra, Authenticator auth,
                                   io.strand.core.DiskSpace.FreeSpace freeSpace) {
        Map<String, String> values = new HashMap<>();
        values.put("STRAND_PORT", "0");
        values.put("STRAND_DATA", dataDir.toString());
        values.put("STRAND_DURABILITY", "os");
        values.put("STRAND_DOC_CAPACITY", "20000");
        values.putAll(extra);
        return new TestServer(new StrandServer(ServerConfig.from(values), auth, freeSpace).start());
    }

    public String url() {
        return server.url();
    }

    public String wsUrl(String ws) {
        return server.url().replace("http://", "ws://") + "/v1/ws/" + ws + "/socket";
    }

    @Override
    public void close() {
        server.close();
    }
}
