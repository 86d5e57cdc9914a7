package io.locksmith.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Parsing and rendering of Sentinel URIs; no server needed. */
@Tag("unit")
class RedisSentinelUriTest {

  @Test
  void aSentinelUriNamesEverySentinelAndTheMaster() {
    RedisURI uri = RedisLockClient.parseUri(
        "redis-sentinel://locker:s3cret@10.0.0.1:26379,10.0.0.2:26380,sentinel-c?sentinelMasterId=orders",
        true);
    assertThat(uri.getSentinelMasterId()).isEqualTo("orders");
    assertThat(uri.getSentinels()).hasSize(3);
    assertThat(uri.getSentinels().get(2).getPort()).as("default sentinel port").isEqualTo(26379);
    assertThat(RedisLockClient.isSentinel(uri)).isTrue();
    assertThat(RedisLockClient.describe(uri)).isEqualTo(
        "redis-sentinel://10.0.0.1:26379,10.0.0.2:26380,sentinel-c:26379?sentinelMasterId=orders");
  }

  @Test
  void theDescriptionNeverShowsThePasswordAndKeepsTlsAndDatabase() {
    RedisURI uri = RedisLockClient.parseUri(
        "rediss-sentinel://s3cret@s1:5000,s2:5001/3?sentinelMasterId=orders", true);
    assertThat(uri.isSsl()).isTrue();
    assertThat(uri.getSentinels()).allSatisfy(s -> assertThat(s.isSsl()).isTrue());
    String described = RedisLockClient.describe(uri);
    assertThat(described).isEqualTo("rediss-sentinel://s1:5000,s2:5001/3?sentinelMasterId=orders")
        .doesNotContain("s3cret");
  }

  @Test
  void aSentinelUriWithoutAMasterNameOrHostOrWithAnUnknownSchemeIsRejected() {
    assertThatThrownBy(() -> RedisLockClient.builder().uri("redis-sentinel://s1:26379").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sentinelMasterId");
    assertThatThrownBy(() -> RedisLockClient.builder()
        .uri("redis-sentinel://:26379?sentinelMasterId=m").build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RedisLockClient.builder()
        .uri("sentinel://user:s3cret@s1:26379?sentinelMasterId=m").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("redis-sentinel://")
        .hasMessageNotContaining("s3cret");
  }

  @Test
  void redlockNodesStayDirectAddresses() {
    // Redlock checks by address that its nodes are distinct masters; a Sentinel URI has no fixed one
    assertThatThrownBy(() -> RedisLockClient.parseUri("redis-sentinel://s1:26379?sentinelMasterId=m"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("redis://");
    assertThatThrownBy(() -> RedlockClient.builder().nodes("redis-sentinel://s1:26379?sentinelMasterId=m",
        "redis://b:1", "redis://c:1").build()).isInstanceOf(IllegalArgumentException.class);
  }
}
