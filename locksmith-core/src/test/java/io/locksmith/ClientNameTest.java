package io.locksmith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.locksmith.injvm.InJvmLockServer;
import java.time.Duration;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The optional client name: validated by {@link ClientOptions}, carried by every owner id. */
class ClientNameTest {

  @Test
  void ownerIdsCarryTheClientNameAfterTheClientIdAndSequence() throws Exception {
    InJvmLockServer server = new InJvmLockServer();
    ClientOptions options = ClientOptions.builder().clientName("web-3/4711").build();
    try (LockClient named = server.newClient(options); LockClient plain = server.newClient()) {
      Lease lease = named.lock("report").acquire(Duration.ofSeconds(1));
      String owner = named.inspect("report").orElseThrow().owner();
      // <clientId>:<seq>@<name>: the client id is everything before the first ':', the name after the first '@'
      assertThat(owner).matches(Pattern.quote(named.clientId()) + ":[0-9a-z]+@web-3/4711");
      assertThat(owner.substring(0, owner.indexOf(':'))).isEqualTo(named.clientId());
      assertThat(owner.substring(owner.indexOf('@') + 1)).isEqualTo("web-3/4711");
      lease.release();

      Lease other = plain.lock("report").acquire(Duration.ofSeconds(1));
      assertThat(plain.inspect("report").orElseThrow().owner()).matches(Pattern.quote(plain.clientId()) + ":[0-9a-z]+");
      other.release();
    }
  }

  @Test
  void theNameIsOptionalAndMustBePrintableAsciiWithoutSpaces() {
    assertThat(ClientOptions.defaults().clientName()).isEmpty();
    ClientOptions named = ClientOptions.builder().clientName("host-1:pid@42").build();
    assertThat(named.clientName()).contains("host-1:pid@42");
    assertThat(named.mutate().namespace("other").build().clientName()).contains("host-1:pid@42");
    assertThat(named.mutate().clientName(null).build().clientName()).isEmpty();
    assertThat(named.toString()).contains("clientName=host-1:pid@42");
    for (String bad : new String[] {"", "web 3", "web\n3", "wéb", "x".repeat(65)}) {
      assertThatThrownBy(() -> ClientOptions.builder().clientName(bad).build()).as(bad)
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clientName")
          .hasMessageNotContaining("\n");
    }
  }
}
