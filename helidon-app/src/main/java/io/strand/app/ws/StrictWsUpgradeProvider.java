package io.strand.app.ws;

import io.helidon.common.Weight;
import io.helidon.webserver.ProtocolConfigs;
import io.helidon.webserver.http1.spi.Http1UpgradeProvider;
import io.helidon.webserver.http1.spi.Http1Upgrader;
import io.helidon.webserver.websocket.WsConfig;

/**
 * Puts {@link StrictWsUpgrader} in place of Helidon's WebSocket upgrader: Helidon's HTTP/1 keeps
 * the first upgrader per protocol in service-weight order, and this one weighs more than Helidon's
 * {@code WsUpgradeProvider} (default weight). Configured by the same {@link WsConfig} (frame limit,
 * origins), so {@code WsRouting} endpoints and their listeners are unchanged. Registered in
 * {@code META-INF/services}. Stateless.
 */
@Weight(200)
public final class StrictWsUpgradeProvider implements Http1UpgradeProvider<WsConfig> {
    @Override
    public String protocolType() {
        return "websocket";
    }

    @Override
    public Class<WsConfig> protocolConfigType() {
        return WsConfig.class;
    }

    @Override
    public Http1Upgrader create(WsConfig config, ProtocolConfigs configs) {
        return new StrictWsUpgrader(config);
    }
}
