package io.locksmith.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

/**
 * In a Spring MVC or WebFlux application, maps {@link LockNotAcquiredException} to a
 * {@link ProblemDetail} response instead of a 500 (see {@link LockNotAcquiredProblemHandler}).
 * {@code locksmith.web.enabled=false} turns it off; a bean of that type of the application's own replaces it.
 */
@AutoConfiguration(after = LocksmithAutoConfiguration.class)
@ConditionalOnClass(ProblemDetail.class)
@ConditionalOnWebApplication
@ConditionalOnProperty(prefix = "locksmith.web", name = "enabled", matchIfMissing = true)
public class LocksmithWebAutoConfiguration {

  /** Creates the auto-configuration; Spring calls this. */
  public LocksmithWebAutoConfiguration() {}

  /**
   * The exception handler.
   *
   * @param properties the status and retry-after settings
   * @return the handler
   * @throws IllegalArgumentException if locksmith.web.status is not a 4xx status
   */
  @Bean
  @ConditionalOnMissingBean
  public LockNotAcquiredProblemHandler lockNotAcquiredProblemHandler(LocksmithProperties properties) {
    LocksmithProperties.Web web = properties.getWeb();
    HttpStatus status = HttpStatus.resolve(web.getStatus());
    if (status == null) {
      throw new IllegalArgumentException("locksmith.web.status " + web.getStatus() + " is not an HTTP status (409, 423)");
    }
    return new LockNotAcquiredProblemHandler(status, web.getRetryAfter());
  }
}
