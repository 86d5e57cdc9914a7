package io.locksmith.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Locksmith's Spring Boot settings: the primary lock client under {@code locksmith.*}, further named
 * clients under {@code locksmith.clients.<name>.*}, and the {@link DistributedLock} annotation's defaults
 * under {@code locksmith.annotation.*}.
 *
 * <p>Bound once at start-up; not thread-safe for writing.
 */
@ConfigurationProperties(prefix = "locksmith")
public class LocksmithProperties extends LockClientProperties {

  /**
   * Further lock clients by name, each with the same settings as the primary one (e.g.
   * locksmith.clients.orders.zookeeper.connect-string). @DistributedLock(client = "orders") uses one.
   */
  private Map<String, LockClientProperties> clients = new LinkedHashMap<>();

  private final Annotation annotation = new Annotation();

  private final Metrics metrics = new Metrics();

  private final HealthSettings health = new HealthSettings();

  private final Web web = new Web();

  /**
   * The web settings.
   *
   * @return the web settings
   */
  public Web getWeb() {
    return web;
  }

  /**
   * {@code locksmith.web.*}: how a LockNotAcquiredException reaching Spring MVC or WebFlux is answered. Not
   * thread-safe for writing.
   */
  public static class Web {
    /** Whether a LockNotAcquiredException becomes a ProblemDetail response (in MVC and WebFlux applications). */
    private boolean enabled = true;

    /** HTTP status when the lock was busy: 409 (Conflict) or 423 (Locked). A backend that cannot be reached gives 503. */
    private int status = 409;

    /** Retry-After sent with the busy status (rounded up to whole seconds); unset means none. */
    private Duration retryAfter;

    /**
     * Whether on.
     *
     * @return true when on
     */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Sets whether on.
     *
     * @param enabled true for on
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * The busy status.
     *
     * @return the status code
     */
    public int getStatus() {
      return status;
    }

    /**
     * Sets the busy status.
     *
     * @param status the status code
     */
    public void setStatus(int status) {
      this.status = status;
    }

    /**
     * The Retry-After.
     *
     * @return the delay, or null for none
     */
    public Duration getRetryAfter() {
      return retryAfter;
    }

    /**
     * Sets the Retry-After.
     *
     * @param retryAfter the delay, or null for none
     */
    public void setRetryAfter(Duration retryAfter) {
      this.retryAfter = retryAfter;
    }
  }

  /**
   * The health indicator settings.
   *
   * @return the health settings
   */
  public HealthSettings getHealth() {
    return health;
  }

  /** {@code locksmith.health.*}: the Actuator health indicators. Not thread-safe for writing. */
  public static class HealthSettings {
    /**
     * Health status of a client while some of its leases are UNCERTAIN (the backend did not confirm a
     * renewal). UP (the default) keeps a backend blip from taking every instance out of service at once;
     * OUT_OF_SERVICE (or any status) opts in. An unreachable backend is DOWN either way.
     */
    private String uncertainStatus = "UP";

    /**
     * The status while leases are uncertain.
     *
     * @return the status code
     */
    public String getUncertainStatus() {
      return uncertainStatus;
    }

    /**
     * Sets the status while leases are uncertain.
     *
     * @param uncertainStatus a status code such as UP or OUT_OF_SERVICE
     */
    public void setUncertainStatus(String uncertainStatus) {
      this.uncertainStatus = uncertainStatus;
    }
  }

  /**
   * The metrics settings.
   *
   * @return the metrics settings
   */
  public Metrics getMetrics() {
    return metrics;
  }

  /** {@code locksmith.metrics.*}: the Micrometer meters of every client. Not thread-safe for writing. */
  public static class Metrics {
    /** Whether the clients report to Micrometer (when locksmith-micrometer and a MeterRegistry are present). */
    private boolean enabled = true;

    /**
     * Regular expressions of lock names that get their own name tag, on meters and observations; other names are
     * tagged "other". Empty (the default): no name tag at all, as each name would be a time series.
     */
    private List<String> nameTags = new ArrayList<>();

    /**
     * Whether metrics are on.
     *
     * @return true when on
     */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Sets whether metrics are on.
     *
     * @param enabled true for on
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * The name-tag patterns.
     *
     * @return the patterns
     */
    public List<String> getNameTags() {
      return nameTags;
    }

    /**
     * Sets the name-tag patterns.
     *
     * @param nameTags the patterns
     */
    public void setNameTags(List<String> nameTags) {
      this.nameTags = nameTags;
    }
  }

  /**
   * The named clients.
   *
   * @return the named clients' settings by name
   */
  public Map<String, LockClientProperties> getClients() {
    return clients;
  }

  /**
   * Sets the named clients.
   *
   * @param clients the named clients' settings by name
   */
  public void setClients(Map<String, LockClientProperties> clients) {
    this.clients = clients;
  }

  /**
   * The annotation settings.
   *
   * @return the annotation settings
   */
  public Annotation getAnnotation() {
    return annotation;
  }

  /** {@code locksmith.annotation.*}: defaults of {@link DistributedLock}. Not thread-safe for writing. */
  public static class Annotation {
    /** Whether methods annotated with @DistributedLock are locked (false leaves them unadvised). */
    private boolean enabled = true;

    /**
     * How long @DistributedLock waits for the lock when the annotation does not say; 0 tries once.
     */
    private Duration waitTime = Duration.ofSeconds(5);

    /**
     * Order of the lock advisor. The default runs it outside @Transactional (whose advisor has the lowest
     * precedence, Integer.MAX_VALUE), so the lock is released only after the transaction has committed.
     */
    private int order = 2147482647;

    /**
     * How long the shutdown waits for @DistributedLock calls in flight; after it, their leases are released
     * (logged at WARN) and their work goes on without the lock. 0 releases them at once.
     */
    private Duration shutdownWait = Duration.ofSeconds(30);

    /**
     * The shutdown wait.
     *
     * @return the shutdown wait
     */
    public Duration getShutdownWait() {
      return shutdownWait;
    }

    /**
     * Sets the shutdown wait.
     *
     * @param shutdownWait the shutdown wait
     */
    public void setShutdownWait(Duration shutdownWait) {
      this.shutdownWait = shutdownWait;
    }

    /**
     * Whether the annotation is enabled.
     *
     * @return true when enabled
     */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Sets whether the annotation is enabled.
     *
     * @param enabled true to enable
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * The default wait time.
     *
     * @return the default wait time
     */
    public Duration getWaitTime() {
      return waitTime;
    }

    /**
     * Sets the default wait time.
     *
     * @param waitTime the default wait time
     */
    public void setWaitTime(Duration waitTime) {
      this.waitTime = waitTime;
    }

    /**
     * The advisor order.
     *
     * @return the order
     */
    public int getOrder() {
      return order;
    }

    /**
     * Sets the advisor order.
     *
     * @param order the order
     */
    public void setOrder(int order) {
      this.order = order;
    }
  }
}
