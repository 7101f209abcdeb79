package io.strand.app.http;

import io.strand.logtier.AppendResult;

/** Reply bodies that HTTP and WebSocket share (the socket adds id and ok). */
public final class Replies {
    private Replies() {
    }

    /** The append ack as JSON text, built directly: it is on every append's path. */
    public static String appendJson(AppendResult r) {
        return "{\"firstSeq\":" + r.firstSeq() + ",\"lastSeq\":" + r.lastSeq() + ",\"ts\":" + r.ts()
                + ",\"durable\":\"" + r.durable() + "\"" + (r.duplicate() ? ",\"duplicate\":true}" : "}");
    }
}
