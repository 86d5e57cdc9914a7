package io.locksmith.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Lock names become exactly one valid node name each; lock nodes are parsed back from their names. */
@Tag("unit")
class NodeNamesTest {

  private static final List<String> NAMES = List.of("invoice-42", "a/b", "a%2Fb", "/", "//", ".", "..", "...",
      "a/../b", "../b", "b", "with space", "tab?\u00e9", "caf\u00e9", "\uD83D\uDE00", "zookeeper", "x.y:z@w,v+u=t~s",
      "\uE000private-use", "\uFFF0special", "%", "%25", "100%");

  @Test
  void everyNameIsOneValidSegmentAndNoTwoNamesShareOne() {
    Set<String> segments = new HashSet<>();
    for (String name : NAMES) {
      String segment = NodeNames.encode(name);
      assertThat(segment).as("segment of %s", name).doesNotContain("/").isNotIn(".", "..");
      PathUtils.validatePath("/locksmith/lock/" + segment); // ZooKeeper's own check: throws if invalid
      assertThat(NodeNames.decode(segment)).as("round trip of %s", name).isEqualTo(name);
      assertThat(segments.add(segment)).as("%s has a segment of its own", name).isTrue();
    }
    assertThat(NodeNames.encode("invoice-42")).isEqualTo("invoice-42");
    assertThat(NodeNames.encode("a/../b")).isEqualTo("a%2F..%2Fb");
    assertThat(NodeNames.encode("..")).isEqualTo("%2E%2E");
  }

  @Test
  void aNameTooLongForOneNodeIsRefused() {
    String grinning = "\uD83D\uDE00";
    assertThat(NodeNames.encode(grinning.repeat(512))).hasSize(512 * 12); // the default limit always fits
    assertThat(NodeNames.encode("x".repeat(NodeNames.MAX_SEGMENT))).hasSize(NodeNames.MAX_SEGMENT);
    assertThatThrownBy(() -> NodeNames.encode("x".repeat(NodeNames.MAX_SEGMENT + 1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("too long for a ZooKeeper node");
    assertThatThrownBy(() -> NodeNames.encode(grinning.repeat(683)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("683 code points");
  }

  @Test
  void lockNodesAreParsedAndQueuedInArrivalOrderWithDowngradesFirst() {
    String owner = NodeNames.ownerKey("client:1");
    assertThat(owner).hasSize(12).isEqualTo(NodeNames.ownerKey("client:1")).isNotEqualTo(NodeNames.ownerKey("client:2"));
    String prefix = NodeNames.prefix('x', "AbC-_12xyz09", owner);
    NodeNames.Node node = NodeNames.parse(prefix + "0000000042");
    assertThat(node).isNotNull();
    assertThat(node.tag()).isEqualTo('x');
    assertThat(node.clientId()).isEqualTo("AbC-_12xyz09");
    assertThat(node.ownerKey()).isEqualTo(owner);
    assertThat(node.sequence()).isEqualTo(42);
    assertThat(node.prefix()).isEqualTo(prefix);
    for (String notOurs : List.of("probe.abc", "x.a.b.12", "x.a.b.000000000a", "lock-0000000001", "xx.a.b.0000000001")) {
      assertThat(NodeNames.parse(notOurs)).as(notOurs).isNull();
    }
    List<NodeNames.Node> queue = NodeNames.queue(List.of("w.c.o.0000000003", "r.c.o.0000000001", "probe.c",
        "d.c.p.0000000004", "w.c.p.0000000002"));
    assertThat(queue).extracting(n -> n.tag() + "" + n.sequence()).containsExactly("d4", "r1", "w2", "w3");
  }
}
