package io.strand.app.ds;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.strand.core.Json;

/**
 * Immutable: a failure of the reserved {@code __ds} APIs with the protocol's own code (upper case,
 * as the reference server spells them), answered as {@code {"error":{"code","message"}}}.
 */
final class DsFailure extends RuntimeException {
    final int status;
    final String code;
    final String holder;

    DsFailure(int status, String code, String message) {
        this(status, code, message, null);
    }

    DsFailure(int status, String code, String message, String holder) {
        super(message);
        this.status = status;
        this.code = code;
        this.holder = holder;
    }

    ObjectNode body() {
        ObjectNode b = Json.MAPPER.createObjectNode();
        ObjectNode e = b.putObject("error").put("code", code).put("message", getMessage());
        if (holder != null) {
            e.put("current_holder", holder);
        }
        return b;
    }
}
