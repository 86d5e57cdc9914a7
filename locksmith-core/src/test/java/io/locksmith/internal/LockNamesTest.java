package io.locksmith.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.ClientOptions;
import io.locksmith.LockClient;
import io.locksmith.injvm.InJvmLockServer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Lock name validation, shared by every backend. */
class LockNamesTest {
  private static final String GRINNING = "\uD83D\uDE00"; // one code point, two UTF-16 chars

  /**
   * Regression (issue 12 item 11): an unpaired surrogate has no UTF-8 encoding, so a backend that
   * encodes names (Redis keys) replaced it with {@code ?}: "job-" followed by U+D800, by U+DBFF, or by
   * {@code ?} were one lock.
   */
  @Test
  void namesWithUnpairedSurrogatesAreRejected() {
    for (String name : List.of("job-\uD800", "job-\uDBFF", "\uDC00job", "job-\uDFFF-x", "a\uDE00\uD83Db",
        GRINNING.substring(0, 1))) {
      assertThatThrownBy(() -> LockNames.validate(name, 512))
          .as(name.codePoints().mapToObj(Integer::toHexString).toList().toString())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("unpaired UTF-16 surrogate");
    }
    assertThat(LockNames.validate("job-" + GRINNING, 512)).isEqualTo("job-" + GRINNING);
    assertThat(LockNames.validate("job-?", 512)).isEqualTo("job-?");
    try (LockClient client = new InJvmLockServer().newClient()) {
      assertThatThrownBy(() -> client.lock("job-\uD800")).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> client.inspect("job-\uDBFF")).isInstanceOf(IllegalArgumentException.class);
      assertThat(client.lock("job-" + GRINNING).tryAcquire()).isPresent();
    }
  }

  /** Issue 13 item 11: the limit counts characters as a reader does (code points), not UTF-16 units. */
  @Test
  void theLengthLimitCountsCodePoints() {
    assertThat(LockNames.validate(GRINNING.repeat(4), 4)).hasSize(8);
    assertThatThrownBy(() -> LockNames.validate(GRINNING.repeat(5), 4))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("5 code points").hasMessageContaining("limit of 4");
    assertThatThrownBy(() -> LockNames.validate("x".repeat(5), 4))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("limit of 4");
    try (LockClient client = new InJvmLockServer().newClient(ClientOptions.builder().maxNameLength(3).build())) {
      assertThat(client.lock(GRINNING.repeat(3)).name()).isEqualTo(GRINNING.repeat(3));
      assertThatThrownBy(() -> client.lock("abcd")).isInstanceOf(IllegalArgumentException.class);
    }
  }
}
