package io.locksmith.testkit;

/**
 * Keeps the quick test run ({@code mvn -Pquick verify}) honest: that run selects the tests tagged
 * {@code unit}, which by definition start no server. When the system property {@code locksmith.test.groups}
 * is {@code unit} (the build passes the selected tags to the test JVM), every server launcher of this testkit
 * refuses to start, so a test tagged {@code unit} that needs a server fails with a message naming the tag to
 * remove, instead of slowing the quick run down unnoticed. H2 in memory is not a server here.
 *
 * <p>Thread-safe: stateless.
 */
public final class QuickRun {

  /** The system property carrying the selected JUnit tags; the build sets it for every test JVM. */
  public static final String GROUPS_PROPERTY = "locksmith.test.groups";

  private QuickRun() {}

  /**
   * Refuses to start a server during the quick run.
   *
   * @param server what was about to start, e.g. {@code "redis-server"}
   * @throws IllegalStateException if the run selects only the tests tagged {@code unit}
   */
  public static void checkServerAllowed(String server) {
    if ("unit".equals(System.getProperty(GROUPS_PROPERTY, "").trim())) {
      throw new IllegalStateException("a test tagged \"unit\" started " + server
          + ": tests tagged unit run in the quick run (mvn -Pquick verify) and must start no server;"
          + " remove the tag from this test class");
    }
  }
}
