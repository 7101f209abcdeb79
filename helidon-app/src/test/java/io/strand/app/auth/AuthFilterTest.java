package io.strand.app.auth;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.http.Method;
import org.junit.jupiter.api.Test;

class AuthFilterTest {
    @Test
    void acceptsQueryTokenShouldHoldOnlyForTheSocketUpgradeAndDurableStreamsPaths() {
        assertTrue(AuthFilter.acceptsQueryToken("/v1/ws/acme/socket", Method.GET));
        assertTrue(AuthFilter.acceptsQueryToken("/ds/acme/some/stream", Method.GET));
        assertTrue(AuthFilter.acceptsQueryToken("/ds/acme/some/stream", Method.POST));
        assertFalse(AuthFilter.acceptsQueryToken("/v1/ws/acme/socket", Method.POST));
        assertFalse(AuthFilter.acceptsQueryToken("/v1/ws/acme/logs/socket", Method.GET), "a log named socket");
        assertFalse(AuthFilter.acceptsQueryToken("/v1/ws//socket", Method.GET));
        assertFalse(AuthFilter.acceptsQueryToken("/v1/ws/acme/logs/m/entries", Method.GET));
        assertFalse(AuthFilter.acceptsQueryToken("/v1/ws/acme/logs/m/entries", Method.POST));
        assertFalse(AuthFilter.acceptsQueryToken("/v1/admin/tokens", Method.POST));
        assertFalse(AuthFilter.acceptsQueryToken("/v1/ds/acme", Method.GET));
    }
}
