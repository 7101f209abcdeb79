package io.strand.app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.helidon.http.DirectHandler;
import io.helidon.http.NotFoundException;
import io.helidon.http.RequestException;
import io.helidon.http.Status;
import io.strand.core.ErrorCode;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class ApiErrorsTest {
    @Test
    void classifyShouldKeepTheStatusOfAWebServerRefusalAndCallTheRestInternal() {
        assertEquals(ErrorCode.NOT_FOUND, ApiErrors.classify(new NotFoundException("no route")).code());
        assertEquals(ErrorCode.NOT_FOUND, ApiErrors.classify(new CompletionException(new NotFoundException("no route"))).code());
        RequestException tooLarge = RequestException.builder().type(DirectHandler.EventType.BAD_REQUEST)
                .status(Status.REQUEST_ENTITY_TOO_LARGE_413).message("too big").build();
        assertEquals(ErrorCode.TOO_LARGE, ApiErrors.classify(tooLarge).code());
        assertEquals(ErrorCode.INTERNAL, ApiErrors.classify(new IllegalStateException("bug")).code());
    }

    @Test
    void forStatusShouldNameEachStatusTheWebServerAnswersWith() {
        assertEquals("bad_request", ApiErrors.forStatus(400, null).code().wire());
        assertEquals("request_timeout", ApiErrors.forStatus(408, null).code().wire());
        assertEquals("uri_too_long", ApiErrors.forStatus(414, null).code().wire());
        assertEquals("unsupported_encoding", ApiErrors.forStatus(415, null).code().wire());
        assertEquals("headers_too_large", ApiErrors.forStatus(431, null).code().wire());
        assertEquals("http_version_not_supported", ApiErrors.forStatus(505, null).code().wire());
        assertEquals("bad_request", ApiErrors.forStatus(418, "teapot").code().wire(), "an unnamed 4xx");
        assertEquals("internal", ApiErrors.forStatus(599, null).code().wire(), "an unnamed 5xx");
        assertEquals("Not Found", ApiErrors.forStatus(404, " ").getMessage(), "the reason phrase when there is no message");
    }
}
