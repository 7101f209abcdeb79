package io.strand.app.ds;

import io.strand.core.ErrorCode;
import io.strand.core.Names;
import io.strand.core.StrandException;
import java.nio.charset.StandardCharsets;

/**
 * Immutable: a request's workspace and decoded stream path, and the one place a DS URL's path is
 * decoded and checked ({@code /ds/{ws}/{seg}/…}: segments decoded once; empty, {@code .} and
 * {@code ..} segments refused).
 */
record DsTarget(String ws, String path) {
    /** The workspace and stream path of {@code /ds/{ws}/{path…}}. */
    static DsTarget of(String rawPath) {
        String rest = rawPath.substring("/ds/".length());
        int slash = rest.indexOf('/');
        if (slash <= 0 || slash == rest.length() - 1) {
            throw StrandException.notFound("a Durable Streams URL is /ds/{workspace}/{stream path}");
        }
        String ws = Names.workspace(decode(rest.substring(0, slash)));
        return new DsTarget(ws, streamPath(rest.substring(slash + 1)));
    }

    /** A raw, root-relative stream path, decoded and checked. */
    static String streamPath(String raw) {
        StringBuilder path = new StringBuilder();
        for (String seg : raw.split("/", -1)) {
            String s = decode(seg);
            if (s.isEmpty() || s.equals(".") || s.equals("..") || s.indexOf('\0') >= 0 || s.indexOf('/') >= 0) {
                throw new StrandException(ErrorCode.BAD_PATH, "invalid stream path '" + raw
                        + "': segments cannot be empty, '.', '..', or contain '/' or NUL");
            }
            if (s.equals("__ds")) {
                throw StrandException.notFound("'__ds' is reserved for protocol APIs this server does not offer");
            }
            if (!path.isEmpty()) {
                path.append('/');
            }
            path.append(s);
        }
        return path.toString();
    }

    /** One percent-encoded path segment, decoded ({@code +} stays a plus). */
    static String decode(String seg) {
        try {
            return java.net.URLDecoder.decode(seg.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new StrandException(ErrorCode.BAD_PATH, "bad percent-encoding in '" + seg + "'");
        }
    }
}
