package io.strand.app.ws;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.socket.SocketContext;
import io.helidon.websocket.WsSession;

/**
 * A {@link WsSession} for tests that look only at the text frames the server sends
 * ({@link #send(String, boolean)}); everything else is accepted and dropped. No socket behind it.
 */
abstract class TextOnlySession implements WsSession {

    @Override
    public WsSession send(BufferData bufferData, boolean last) {
        return this;
    }

    @Override
    public WsSession ping(BufferData bufferData) {
        return this;
    }

    @Override
    public WsSession pong(BufferData bufferData) {
        return this;
    }

    @Override
    public WsSession close(int code, String reason) {
        return this;
    }

    @Override
    public WsSession terminate() {
        return this;
    }

    @Override
    public SocketContext socketContext() {
        throw new UnsupportedOperationException();
    }
}
