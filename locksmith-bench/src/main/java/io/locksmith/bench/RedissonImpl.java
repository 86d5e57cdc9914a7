package io.locksmith.bench;

import java.util.List;
import java.util.function.BiFunction;
import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's locks with their defaults (watchdog lease of 30 s, pub/sub waiting): {@code RLock},
 * {@code RFairLock}, {@code RFencedLock}, and {@code RedissonRedLock} over one client per node.
 */
final class RedissonImpl implements LockImpl {
  private final String name;
  private final List<RedissonClient> clients;
  private final BiFunction<List<RedissonClient>, String, RLock> lockFor;

  private RedissonImpl(String name, List<String> uris, BiFunction<List<RedissonClient>, String, RLock> lockFor) {
    this.name = name;
    this.clients = uris.stream().map(RedissonImpl::connect).toList();
    this.lockFor = lockFor;
  }

  private static RedissonClient connect(String uri) {
    Config config = new Config();
    config.useSingleServer().setAddress(uri);
    return Redisson.create(config);
  }

  static RedissonImpl lock(String uri) {
    return new RedissonImpl("redisson", List.of(uri), (c, n) -> c.get(0).getLock(n));
  }

  static RedissonImpl fairLock(String uri) {
    return new RedissonImpl("redisson-fair", List.of(uri), (c, n) -> c.get(0).getFairLock(n));
  }

  static RedissonImpl fencedLock(String uri) {
    return new RedissonImpl("redisson-fenced", List.of(uri), (c, n) -> c.get(0).getFencedLock(n));
  }

  @SuppressWarnings("deprecation") // RedissonRedLock is deprecated upstream; it is the peer we compare with
  static RedissonImpl redLock(List<String> uris) {
    return new RedissonImpl("redisson-redlock", uris, (c, n) ->
        new RedissonRedLock(c.stream().map(r -> r.getLock(n)).toArray(RLock[]::new)));
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Held acquire(String lockName, long waitNanos) throws InterruptedException {
    RLock lock = lockFor.apply(clients, lockName);
    // no lease time given: Redisson's watchdog renews, like Locksmith's watched lease
    return lock.tryLock(waitNanos, java.util.concurrent.TimeUnit.NANOSECONDS) ? lock::unlock : null;
  }

  @Override
  public void close() {
    clients.forEach(RedissonClient::shutdown);
  }
}
