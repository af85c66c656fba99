package io.ratchet.spring.boot;

import io.ratchet.client.RatchetClient;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/** Actuator's {@code ratchet} health component ({@link RatchetHealthIndicator}); off with {@code management.health.ratchet.enabled=false}. */
@AutoConfiguration(after = RatchetAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(RatchetClient.class)
@ConditionalOnEnabledHealthIndicator("ratchet")
public class RatchetHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "ratchetHealthIndicator")
    public RatchetHealthIndicator ratchetHealthIndicator(RatchetClient client) {
        return new RatchetHealthIndicator(client);
    }
}
