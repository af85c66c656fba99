package io.ratchet.spring.boot;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.ratchet.client.RatchetClient;
import io.ratchet.client.micrometer.RatchetClientMetrics;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The client's meters ({@link RatchetClientMetrics}) as a {@link MeterBinder} bean: Spring Boot binds it
 * to every registry it configures, so they show under {@code /actuator/metrics} and in any exporter.
 */
@AutoConfiguration(after = RatchetAutoConfiguration.class)
@ConditionalOnClass(MeterBinder.class)
@ConditionalOnBean(RatchetClient.class)
public class RatchetMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public RatchetClientMetrics ratchetClientMetrics(RatchetClient client) {
        return new RatchetClientMetrics(client);
    }
}
