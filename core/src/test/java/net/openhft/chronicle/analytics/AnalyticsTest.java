package net.openhft.chronicle.analytics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLClassLoader;
import net.openhft.chronicle.core.analytics.AnalyticsFacade;
import org.junit.jupiter.api.Test;

class AnalyticsTest {

    @Test
    void loadingTheClassShouldTurnChronicleAnalyticsOffEvenWithoutTheFlag() throws Exception {
        String before = System.clearProperty(Analytics.DISABLE);
        try {
            URL classes = Analytics.class.getProtectionDomain().getCodeSource().getLocation();
            try (URLClassLoader fresh = new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader())) {
                Class<?> loaded = Class.forName(Analytics.class.getName(), true, fresh);
                assertTrue(loaded != Analytics.class, "loaded anew, so its static initialiser ran now");
            }
            assertEquals("true", System.getProperty(Analytics.DISABLE));
            assertFalse(AnalyticsFacade.isEnabled());
            assertTrue(AnalyticsFacade.builder("io.strand", "test").getClass().getSimpleName().startsWith("Mute"),
                    "chronicle-core takes its mute builder, never a reflective one into this class");
        } finally {
            if (before == null) {
                System.clearProperty(Analytics.DISABLE);
            } else {
                System.setProperty(Analytics.DISABLE, before);
            }
        }
    }
}
