package io.locksmith.redis;

import io.locksmith.testkit.RedisServer;
import java.util.ArrayList;
import java.util.List;

/** N independent Redis servers for Redlock tests, started in parallel; closed with the test class. */
final class RedlockNodes implements AutoCloseable {
  final List<RedisServer> servers = new ArrayList<>();

  RedlockNodes(int n) {
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

  @Override
  public void close() {
    servers.forEach(RedisServer::close);
  }
}
