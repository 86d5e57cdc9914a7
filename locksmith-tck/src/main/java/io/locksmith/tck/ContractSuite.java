package io.locksmith.tck;

import io.locksmith.LockClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * What every contract suite of this module shares: the backend's clients, which the suite closes after
 * each test, and a lock name unique to the running test. A backend implements {@link #newClient()} in the
 * concrete suite's subclass; only the suites of this module extend it. Not thread-safe: JUnit runs
 * one test of an instance at a time.
 */
public abstract class ContractSuite {
  /** A short watched lease so that renewal, expiry and loss are seen quickly. */
  protected static final Duration SHORT_LEASE = Duration.ofMillis(300);
  /**
   * The watched lease of the "outlives several lease times" cases: renewed every third of it, so a
   * renewal may come up to two thirds late. With 300 ms that slack (200 ms) ran out three times in
   * full builds on a 2-core machine loaded by parallel builds (most likely the renewal timer was not
   * scheduled in time; never seen in a run of the module alone); 900 ms keeps the property with more margin.
   */
  protected static final Duration WATCHED_LEASE = Duration.ofMillis(900);

  private final List<LockClient> clients = new ArrayList<>();
  private final String namePrefix;
  private String name;

  /** @param namePrefix what the names of this suite's locks start with, e.g. {@code "tck/"} */
  ContractSuite(String namePrefix) {
    this.namePrefix = namePrefix;
  }

  /** @return a new client of the backend under test, with its own connections; the suite closes it */
  protected abstract LockClient newClient();

  /**
   * How soon a holder whose hold an operator force-unlocked must see its lease {@code LOST}, with a 30 s
   * watched lease (whose first renewal is 10 s away): the backend tells the evicted holder, rather than
   * letting it find out at its next renewal. The default is generous for a loaded machine and still far
   * below that renewal. A backend that cannot tell evicted holders overrides it with the bound it does
   * keep and documents why.
   *
   * @return the bound
   */
  protected Duration evictionNoticeBound() {
    return Duration.ofSeconds(2);
  }

  /** @return a client the suite closes after the test */
  protected final LockClient client() {
    LockClient c = newClient();
    clients.add(c);
    return c;
  }

  /** @return a lock name unique to the running test */
  protected final String name() {
    return name;
  }

  @BeforeEach
  void nameTheLock(TestInfo info) {
    name = namePrefix + info.getTestMethod().map(m -> m.getName()).orElse("test") + "/"
        + Long.toHexString(System.nanoTime());
  }

  @AfterEach
  void closeClients() {
    for (LockClient c : clients) {
      c.close();
    }
    clients.clear();
  }
}
