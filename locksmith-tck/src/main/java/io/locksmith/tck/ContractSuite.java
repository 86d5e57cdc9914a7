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

  /**
   * The watched lease of the force-unlock cases ({@code forceUnlockTells...AtOnce}): long enough that
   * its first renewal (a third of it) comes well after {@link #evictionNoticeBound()}, so a LOST seen
   * within that bound was told, not found at a renewal. A backend that documents finding out at the
   * renewal (see {@link #evictionNoticeBound()}) may shorten both together to keep its case short.
   *
   * @return the lease, 30 s by default (first renewal 10 s after the grant)
   */
  protected Duration evictionCaseLease() {
    return Duration.ofSeconds(30);
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

  /** A case run with a real-time window: a delay, a short lease or a bounded wait of the given length. */
  @FunctionalInterface
  protected interface WindowedCase {
    /**
     * @param window the window of this attempt
     * @throws Exception on failure; {@link #windowMissed} when the machine, not the backend, was too slow
     */
    void run(Duration window) throws Exception;
  }

  /**
   * Runs a case that needs some of its steps done within a real-time window (e.g. "checked while the
   * delay still runs"), first with a short window and, each time the test itself was too slow for it
   * (the case calls {@link #windowMissed}), again with twice the window under a fresh lock name. A
   * loaded machine thus costs time, never a false failure; any other failure fails at once. The last
   * window is {@code first} times 2^(attempts-1).
   *
   * @param first the first window
   * @param attempts how many windows to try
   * @param body the case
   * @throws Exception what the case threw, or an AssertionError if every window was missed
   */
  protected final void withGrowingWindow(Duration first, int attempts, WindowedCase body) throws Exception {
    String base = name;
    Duration window = first;
    List<String> missed = new ArrayList<>();
    for (int attempt = 0; attempt < attempts; attempt++, window = window.multipliedBy(2)) {
      name = attempt == 0 ? base : base + "/retry-" + attempt;
      try {
        body.run(window);
        return;
      } catch (WindowMissed e) {
        missed.add(window.toMillis() + " ms: " + e.getMessage());
        System.out.printf("[window] %s: %d ms too short (%s); again with %d ms%n", base, window.toMillis(),
            e.getMessage(), window.toMillis() * 2);
      } finally {
        name = base;
      }
    }
    throw new AssertionError("the test was too slow for every window it tried: " + missed);
  }

  /**
   * Ends an attempt of {@link #withGrowingWindow} whose precondition did not hold in time.
   *
   * @param why which step did not finish within the window
   * @return never returns normally; declared so that callers can write {@code throw windowMissed(..)}
   */
  protected static RuntimeException windowMissed(String why) {
    throw new WindowMissed(why);
  }

  /** The test thread (not the backend) was too slow for an attempt's window. */
  private static final class WindowMissed extends RuntimeException {
    WindowMissed(String why) {
      super(why, null, false, false);
    }
  }

  @AfterEach
  void closeClients() {
    for (LockClient c : clients) {
      c.close();
    }
    clients.clear();
  }
}
