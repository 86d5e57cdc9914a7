package io.locksmith.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** URIs: hosts, default port, chroot, digest credentials; malformed ones are refused without leaking secrets. */
@Tag("unit")
class ZooKeeperUrisTest {

  @Test
  void hostsPortsChrootAndCredentialsAreParsed() {
    ZooKeeperUris.Parsed p = ZooKeeperUris.parse("zookeeper://zk1:2181,zk2,10.0.0.3:2182/apps/locks");
    assertThat(p.hosts()).containsExactly("zk1:2181", "zk2:2181", "10.0.0.3:2182");
    assertThat(p.chroot()).isEqualTo("/apps/locks");
    assertThat(p.user()).isNull();
    assertThat(p.connectString()).isEqualTo("zk1:2181,zk2:2181,10.0.0.3:2182");
    assertThat(p.description()).isEqualTo("zookeeper://zk1:2181,zk2:2181,10.0.0.3:2182/apps/locks");

    ZooKeeperUris.Parsed auth = ZooKeeperUris.parse("zookeeper://alice:p%40ss%2Fw:rd@[::1]:2181/");
    assertThat(auth.user()).isEqualTo("alice");
    assertThat(auth.password()).isEqualTo("p@ss/w:rd");
    assertThat(auth.hosts()).containsExactly("[::1]:2181");
    assertThat(auth.chroot()).isEmpty();
    assertThat(auth.description()).doesNotContain("alice").doesNotContain("p@ss");
    assertThat(ZooKeeperUris.parse("zookeeper://h/app@1").chroot()).as("an @ in the chroot").isEqualTo("/app@1");
  }

  @Test
  void malformedUrisAreRefusedWithoutTheirPassword() {
    for (String bad : List.of("zk://h:2181", "zookeeper://", "zookeeper://h:0", "zookeeper://h:65536",
        "zookeeper://h:abc", "zookeeper://h,,k", "zookeeper://h/a//b", "zookeeper://h/a/../b", "zookeeper://h/a/",
        "zookeeper://h/./a", "zookeeper://h?x=1", "zookeeper://h#f", "zookeeper://nopass@h",
        "zookeeper://u:secret%zz@h", "zookeeper://u:secret@h:-1", "zookeeper://h/a\u0001b")) {
      assertThatThrownBy(() -> ZooKeeperUris.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("secret"));
    }
  }

  @Test
  void redactHidesCredentialsOnly() {
    assertThat(ZooKeeperUris.redact("zookeeper://u:pw@h:1/c@d")).isEqualTo("zookeeper://***@h:1/c@d");
    assertThat(ZooKeeperUris.redact("zookeeper://h:1/c@d")).isEqualTo("zookeeper://h:1/c@d");
    assertThat(ZooKeeperUris.redact("zk://u:pw@h")).isEqualTo("zk://***@h");
  }
}
