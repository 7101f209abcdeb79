package io.strand.app.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;
import io.strand.logtier.AppendResult;

/** Reply bodies that HTTP and WebSocket share (the socket adds id and ok). */
public final class Replies {
    private Replies() {
    }

    public static ObjectNode append(AppendResult r) {
        ObjectNode body = Json.MAPPER.createObjectNode();
        body.put("firstSeq", r.firstSeq());
        body.put("lastSeq", r.lastSeq());
        body.put("ts", r.ts());
        body.put("durable", r.durable());
        if (r.duplicate()) {
            body.put("duplicate", true);
        }
        return body;
    }
}
