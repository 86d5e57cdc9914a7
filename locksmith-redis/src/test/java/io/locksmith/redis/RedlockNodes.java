package io.locksmith.redis;

import io.locksmith.testkit.RedisServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * N independent Redis servers for Redlock tests, started in parallel before the class and closed
 * after it: {@code @RegisterExtension static final RedlockNodes NODES = new RedlockNodes(5);}.
 */
final class RedlockNodes implements BeforeAllCallback, AfterAllCallback {
  private final int n;
  private final List<RedisServer> servers = new ArrayList<>();

  RedlockNodes(int n) {
    this.n = n;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    List<RedisServer> built = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      built.add(RedisServer.builder().build());
    }
    try {
      built.parallelStream().forEach(RedisServer::restart);
    } catch (RuntimeException e) {
      built.forEach(RedisServer::close);
      throw e;
    }
    servers.addAll(built);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    servers.forEach(RedisServer::close);
    servers.clear();
  }

  List<String> uris() {
    return servers.stream().map(RedisServer::uri).toList();
  }

  RedisServer get(int i) {
    return servers.get(i);
  }

  /** Resumes every paused server; used after tests that pause some. */
  void resumeAll() {
    servers.forEach(RedisServer::resume);
  }
}
