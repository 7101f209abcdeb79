package io.strand.app.reliability;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class of the reliability suite: tagged {@code reliability} (what {@code mvn verify
 * -Preliability} runs) and reporting one row per test through {@link ReliabilityReport}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag("reliability")
@ExtendWith(ReliabilityReport.class)
public @interface FaultTest {
}
