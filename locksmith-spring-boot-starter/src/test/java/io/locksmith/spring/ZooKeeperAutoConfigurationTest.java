package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.zookeeper.ZooKeeperTestServer;
import io.locksmith.zookeeper.ZooKeeperLockClient;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The ZooKeeper auto-configuration against an in-JVM ZooKeeper server: by connect string, and on the application's CuratorFramework. */
@SpringBootTest(classes = ZooKeeperAutoConfigurationTest.App.class)
@DirtiesContext
class ZooKeeperAutoConfigurationTest {

  @RegisterExtension
  static final SharedTopology<ZooKeeperTestServer> ZK = SharedTopology.of(ZooKeeperTestServer.class, ZooKeeperTestServer::start);

  @DynamicPropertySource
  static void zookeeper(DynamicPropertyRegistry registry) {
    registry.add("locksmith.zookeeper.connect-string", () -> ZK.get().connectString());
    registry.add("locksmith.zookeeper.session-timeout", () -> "4s");
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    SampleLockedService sampleLockedService() {
      return new SampleLockedService();
    }
  }

  @Autowired LockClient client;
  @Autowired SampleLockedService service;

  @Test
  void theConnectStringGivesAZooKeeperClientAndTheAnnotationLocksOnTheEnsemble() {
    assertThat(client).isInstanceOf(ZooKeeperLockClient.class);
    long first = service.tokenOf("zk-it");
    assertThat(first).isPositive();
    assertThat(service.tokenOf("zk-it")).isGreaterThan(first);
  }

  @Test
  void anExistingCuratorFrameworkBeanIsUsedAndLeftOpen() {
    CuratorFramework[] seen = new CuratorFramework[1];
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(LocksmithAutoConfiguration.class))
        .withPropertyValues("locksmith.backend=zookeeper")
        .withBean(CuratorFramework.class, () -> {
          CuratorFramework c = CuratorFrameworkFactory.newClient(ZK.get().connectString(), 4000, 3000, new RetryNTimes(3, 200));
          c.start();
          seen[0] = c;
          return c;
        }, d -> d.setDestroyMethodName("")).run(ctx -> {
          LockClient zk = ctx.getBean(LockClient.class);
          assertThat(zk).isInstanceOf(ZooKeeperLockClient.class);
          try (Lease lease = zk.lock("curator-bean").acquire(Duration.ofSeconds(5))) {
            assertThat(lease.fencingToken()).isPositive();
            // the lock's node is visible through the application's own framework
            assertThat(client.inspect("curator-bean")).isPresent();
          }
        });
    try {
      assertThat(seen[0].getZookeeperClient().isConnected()).as("the application's framework stays open").isTrue();
    } finally {
      seen[0].close();
    }
  }
}
