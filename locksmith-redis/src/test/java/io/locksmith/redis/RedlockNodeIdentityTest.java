package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.testkit.RedisServer;
import io.locksmith.testkit.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Redlock's nodes must be distinct servers: one process counted several times would make a "quorum" of
 * one vote. Three real Redis processes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedlockNodeIdentityTest {
  @RegisterExtension
  static final RedlockNodes nodes = new RedlockNodes(3);

  /**
   * Roomy: a node that is slow to connect or to answer INFO at start is not compared (by design), and
   * this test needs every node compared even on a loaded host.
   */
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(5);

  /** Builds and, should that succeed, closes again: a wrongly accepted client must not leak. */
  private static void build(List<String> uris) {
    try (RedlockClient ignored = RedlockClient.builder().nodes(uris).nodeTimeout(NODE_TIMEOUT).build()) {
      // only whether build() accepts the nodes is under test
    }
  }

  private static String hostPort(RedisServer server) {
    return server.uri().substring("redis://".length());
  }

  // ------------------------------------------------------------------ issue 12 item 8

  @Test
  void urisThatDifferOnlyInTheDatabaseNumberAreOneNode() {
    String one = nodes.get(0).uri();
    assertThatThrownBy(() -> build(List.of(one + "/0", one + "/1", one + "/2")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is given twice")
        .hasMessageContaining("by host and port, whatever the database");
    // two distinct servers and a second database of one of them are still two servers
    assertThatThrownBy(() -> build(List.of(one + "/1", nodes.get(1).uri(), one + "/2")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is given twice");
  }

  @Test
  void credentialsSchemeHostCaseAndIpLiteralSpellingDoNotMakeAnotherNode() {
    // rejected before connecting: nothing needs to listen on these addresses
    assertThatThrownBy(() -> build(List.of("redis://Redis-A.example:7000", "redis://b.example:7000",
        "rediss://user:secret@redis-a.example.:7000/3")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is given twice")
        .hasMessageNotContaining("secret");
    assertThatThrownBy(() -> build(List.of("redis://[::1]:7000", "redis://b.example:7000",
        "redis://[0:0:0:0:0:0:0:1]:7000")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is given twice");
    assertThatThrownBy(() -> build(List.of("redis://127.0.0.1:7000", "redis://b.example:7000",
        "redis://[::ffff:127.0.0.1]:7000")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is given twice");
  }

  @Test
  void oneServerReachedUnderTwoAddressesIsRejectedAtStartByItsRunId() {
    // a port forward (or a DNS alias, or localhost next to 127.0.0.1): two addresses, one process
    try (TcpProxy forward = TcpProxy.start(nodes.get(0).host(), nodes.get(0).port())) {
      String alias = "redis://" + forward.host() + ":" + forward.port();
      assertThatThrownBy(() -> build(List.of(nodes.get(0).uri(), nodes.get(1).uri(), alias)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("are the same Redis server (run_id ")
          .hasMessageContaining(hostPort(nodes.get(0)))
          .hasMessageContaining(forward.host() + ":" + forward.port());
      // the same proxy in front of a node that is not otherwise listed is an ordinary node
      try (TcpProxy other = TcpProxy.start(nodes.get(2).host(), nodes.get(2).port());
          RedlockClient locks = RedlockClient.builder().nodes(nodes.get(0).uri(), nodes.get(1).uri(),
              "redis://" + other.host() + ":" + other.port()).nodeTimeout(NODE_TIMEOUT).build()) {
        assertThat(locks.lock("through-a-proxy").tryAcquire()).isPresent();
      }
    }
  }
}
