package io.strand.app;

import java.util.Locale;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code --log-format text|json} and {@code --log-level}: how the server's log lines (java.util.logging,
 * Helidon's, Chronicle's through slf4j-jdk14, and the access log) reach stderr. Immutable.
 */
public record ServerLogging(boolean json, Level level) {
    public static final String DEFAULT_FORMAT = "text";
    public static final String DEFAULT_LEVEL = "INFO";
    /** Held so the level sticks (JUL keeps loggers weakly); Chronicle's start-up banners are INFO. */
    private static final Logger CHRONICLE = Logger.getLogger("net.openhft");

    /**
     * @param format {@code text} or {@code json}
     * @param level a java.util.logging level name ({@code SEVERE}, {@code WARNING}, {@code INFO},
     *     {@code FINE}, …) or {@code error}, {@code warn}, {@code debug}, {@code trace}
     */
    public static ServerLogging parse(String format, String level) {
        String f = format.trim().toLowerCase(Locale.ROOT);
        if (!f.equals("text") && !f.equals("json")) {
            throw new IllegalArgumentException("--log-format must be text or json, not '" + format + "'");
        }
        String l = level.trim().toUpperCase(Locale.ROOT);
        Level parsed = switch (l) {
            case "ERROR" -> Level.SEVERE;
            case "WARN" -> Level.WARNING;
            case "DEBUG" -> Level.FINE;
            case "TRACE" -> Level.FINEST;
            default -> {
                try {
                    yield Level.parse(l);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("--log-level must be one of error, warn, info, debug, trace "
                            + "(or a java.util.logging level), not '" + level + "'");
                }
            }
        };
        return new ServerLogging(f.equals("json"), parsed);
    }

    /** Replaces the root logger's handlers with one stderr handler in this format and level. */
    public void install() {
        Logger root = Logger.getLogger("");
        for (Handler h : root.getHandlers()) {
            root.removeHandler(h);
        }
        root.addHandler(handler());
        root.setLevel(level);
        CHRONICLE.setLevel(level.intValue() < Level.INFO.intValue() ? level : Level.WARNING);
    }

    /** A stderr handler in this format and level. */
    public Handler handler() {
        ConsoleHandler handler = new ConsoleHandler();
        handler.setFormatter(formatter());
        handler.setLevel(level);
        return handler;
    }

    public Formatter formatter() {
        return json ? new JsonLogFormatter() : new TextLogFormatter();
    }
}
