package io.strand.app.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.common.uri.UriQuery;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.WritableHeaders;
import io.strand.core.ErrorCode;
import io.strand.core.StrandException;
import org.junit.jupiter.api.Test;

class BearerTokenTest {
    @Test
    void acceptsQueryTokenShouldHoldOnlyForTheSocketUpgradeAndDurableStreamsPaths() {
        assertTrue(BearerToken.acceptsQueryToken("/v1/ws/acme/socket", Method.GET));
        assertTrue(BearerToken.acceptsQueryToken("/ds/acme/some/stream", Method.GET));
        assertTrue(BearerToken.acceptsQueryToken("/ds/acme/some/stream", Method.POST));
        assertFalse(BearerToken.acceptsQueryToken("/v1/ws/acme/socket", Method.POST));
        assertFalse(BearerToken.acceptsQueryToken("/v1/ws/acme/logs/socket", Method.GET), "a log named socket");
        assertFalse(BearerToken.acceptsQueryToken("/v1/ws//socket", Method.GET));
        assertFalse(BearerToken.acceptsQueryToken("/v1/ws/acme/logs/m/entries", Method.GET));
        assertFalse(BearerToken.acceptsQueryToken("/v1/ws/acme/logs/m/entries", Method.POST));
        assertFalse(BearerToken.acceptsQueryToken("/v1/admin/tokens", Method.POST));
        assertFalse(BearerToken.acceptsQueryToken("/v1/ds/acme", Method.GET));
    }

    @Test
    void ofShouldPreferTheBearerHeaderWhenBothAreSent() {
        WritableHeaders<?> headers = WritableHeaders.create().set(HeaderNames.AUTHORIZATION, "bearer  abc.def ");
        assertEquals("abc.def", BearerToken.of(headers, UriQuery.create("token=other"), "/v1/ws/acme/socket", Method.GET));
    }

    @Test
    void ofShouldGiveTheEmptyTokenWhenTheHeaderIsNotABearerOne() {
        WritableHeaders<?> headers = WritableHeaders.create().set(HeaderNames.AUTHORIZATION, "Basic dXNlcjpwdw==");
        assertEquals("", BearerToken.of(headers, UriQuery.create("token=other"), "/v1/ws/acme/socket", Method.GET));
    }

    @Test
    void ofShouldDecodeTheQueryTokenWhenThePathAcceptsIt() {
        assertEquals("a b+c", BearerToken.of(WritableHeaders.create(), UriQuery.create("x=1&token=a%20b%2Bc"),
                "/ds/acme/s", Method.GET));
        assertNull(BearerToken.of(WritableHeaders.create(), UriQuery.create("x=1"), "/v1/ws/acme/logs", Method.GET));
    }

    @Test
    void ofShouldRefuseAQueryTokenWhenThePathNeedsTheHeader() {
        StrandException e = assertThrows(StrandException.class, () -> BearerToken.of(WritableHeaders.create(),
                UriQuery.create("token=abc"), "/v1/ws/acme/logs/m/entries", Method.GET));
        assertEquals(ErrorCode.UNAUTHORIZED, e.code());
    }
}
