package io.locksmith.spring;

/**
 * Adjusts what properties cannot say before a lock client is built. The type argument chooses what is
 * customized: {@code io.locksmith.ClientOptions.Builder} (every backend), or a backend's own builder,
 * {@code RedisLockClient.Builder}, {@code RedlockClient.Builder}, {@code ZooKeeperLockClient.Builder} or
 * {@code JdbcLockClient.Builder}. A customizer is called only for builders of its type, once per client
 * built, on the start-up thread, after the properties have been applied (so it can override them).
 *
 * <pre>{@code
 * @Bean
 * LockClientCustomizer<RedisLockClient.Builder> redisResources(ClientResources resources) {
 *   return (client, builder) -> builder.clientResources(resources);
 * }
 * }</pre>
 *
 * @param <B> the builder type customized
 */
@FunctionalInterface
public interface LockClientCustomizer<B> {

  /**
   * Customizes one client's builder.
   *
   * @param clientName the client being built: {@code "default"} for the primary one, else its name under
   *     {@code locksmith.clients}
   * @param builder the builder, with the properties already applied
   * @throws RuntimeException anything thrown fails the application's start-up
   */
  void customize(String clientName, B builder);
}
