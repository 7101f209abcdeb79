package io.strand.app.ds;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;

/** The Durable Streams protocol's header names. */
final class DsHeaders {
    static final HeaderName NEXT_OFFSET = HeaderNames.create("Stream-Next-Offset");
    static final HeaderName UP_TO_DATE = HeaderNames.create("Stream-Up-To-Date");
    static final HeaderName CURSOR = HeaderNames.create("Stream-Cursor");
    static final HeaderName CLOSED = HeaderNames.create("Stream-Closed");
    static final HeaderName TTL = HeaderNames.create("Stream-TTL");
    static final HeaderName EXPIRES_AT = HeaderNames.create("Stream-Expires-At");
    static final HeaderName SEQ = HeaderNames.create("Stream-Seq");
    static final HeaderName FORKED_FROM = HeaderNames.create("Stream-Forked-From");
    static final HeaderName FORK_OFFSET = HeaderNames.create("Stream-Fork-Offset");
    static final HeaderName FORK_SUB_OFFSET = HeaderNames.create("Stream-Fork-Sub-Offset");
    static final HeaderName SSE_ENCODING = HeaderNames.create("Stream-SSE-Data-Encoding");
    static final HeaderName PRODUCER_ID = HeaderNames.create("Producer-Id");
    static final HeaderName PRODUCER_EPOCH = HeaderNames.create("Producer-Epoch");
    static final HeaderName PRODUCER_SEQ = HeaderNames.create("Producer-Seq");
    static final HeaderName PRODUCER_EXPECTED_SEQ = HeaderNames.create("Producer-Expected-Seq");
    static final HeaderName PRODUCER_RECEIVED_SEQ = HeaderNames.create("Producer-Received-Seq");

    static final String ALLOW_HEADERS = "content-type, authorization, if-none-match, Stream-Seq, Stream-TTL, "
            + "Stream-Expires-At, Stream-Closed, Producer-Id, Producer-Epoch, Producer-Seq, Stream-Forked-From, "
            + "Stream-Fork-Offset, Stream-Fork-Sub-Offset";
    static final String EXPOSE_HEADERS = "Stream-Next-Offset, Stream-Cursor, Stream-Up-To-Date, Stream-Closed, "
            + "Stream-TTL, Stream-Expires-At, Stream-SSE-Data-Encoding, Producer-Epoch, Producer-Seq, "
            + "Producer-Expected-Seq, Producer-Received-Seq, etag, content-type, location";

    private DsHeaders() {
    }
}
