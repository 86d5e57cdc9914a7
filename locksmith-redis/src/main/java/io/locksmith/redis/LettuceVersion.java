package io.locksmith.redis;

import io.lettuce.core.RedisClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Lettuce on the class path, checked when a client is built: a Lettuce older than {@link #FLOOR}
 * lacks methods this module calls, and would fail later, on a rare path or at shutdown, with a {@code
 * NoSuchMethodError} that names neither Lettuce's version nor the fix. The floor is the oldest line the
 * module's tests passed on (docs/redis.md, "Lettuce versions").
 *
 * <p>A version that cannot be read (a repackaged Lettuce without its manifest or Maven metadata) and a
 * major line newer than the newest tested are let through with one WARN each: they may well work, and
 * refusing them would stop an application that does. Thread-safe.
 */
final class LettuceVersion implements Comparable<LettuceVersion> {
  private static final Logger log = LoggerFactory.getLogger(LettuceVersion.class);

  /**
   * The oldest Lettuce the module works with: 6.3.2 passed the module's Lettuce subset (the POM's {@code
   * lettuce-*} runs); 6.2.7 lacks {@code RedisClusterClient#suspendTopologyRefresh}, which closing a Cluster
   * client calls.
   */
  static final LettuceVersion FLOOR = new LettuceVersion(6, 3, 2, "RELEASE");
  /** The newest Lettuce the module was tested on (its major line is let through without a warning). */
  static final LettuceVersion NEWEST_TESTED = new LettuceVersion(7, 7, 0, "RELEASE");

  /** major.minor[.patch] and an optional qualifier after '.' or '-' (RELEASE, BUILD-SNAPSHOT, M1, RC2 …),
   *  then an optional "/commit" as Lettuce's manifest writes it. */
  private static final Pattern FORM =
      Pattern.compile("(\\d+)\\.(\\d+)(?:\\.(\\d+))?(?:[.-]([A-Za-z0-9][A-Za-z0-9.-]*))?(?:/\\S*)?");

  /** The warnings already given: each is logged once per class loader, not at every client built. */
  private static final Set<String> warned = ConcurrentHashMap.newKeySet();

  final int major;
  final int minor;
  final int patch;
  /** RELEASE, BUILD-SNAPSHOT, SNAPSHOT, M1 …, or "" */
  final String qualifier;

  LettuceVersion(int major, int minor, int patch, String qualifier) {
    this.major = major;
    this.minor = minor;
    this.patch = patch;
    this.qualifier = qualifier;
  }

  /**
   * Reads a Lettuce version string.
   *
   * @param text e.g. {@code 6.6.0.RELEASE}, {@code 6.6.0.RELEASE/643bd47} (the manifest's form), {@code
   *     7.8.0.BUILD-SNAPSHOT}, {@code 7.0.0-SNAPSHOT}, {@code 7.0.0.M1}, {@code 6.8}
   * @return the version, or empty if {@code text} is null or not of that form
   */
  static Optional<LettuceVersion> parse(String text) {
    if (text == null) {
      return Optional.empty();
    }
    Matcher m = FORM.matcher(text.trim());
    if (!m.matches()) {
      return Optional.empty();
    }
    try {
      return Optional.of(new LettuceVersion(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
          m.group(3) == null ? 0 : Integer.parseInt(m.group(3)), m.group(4) == null ? "" : m.group(4)));
    } catch (NumberFormatException tooLong) {
      return Optional.empty();
    }
  }

  /**
   * The numbers only: a snapshot or milestone of x.y.z carries x.y.z's API as far as this module is
   * concerned, so {@code 6.6.0-SNAPSHOT} passes a 6.6.0 floor.
   */
  @Override
  public int compareTo(LettuceVersion o) {
    int c = Integer.compare(major, o.major);
    if (c == 0) {
      c = Integer.compare(minor, o.minor);
    }
    return c != 0 ? c : Integer.compare(patch, o.patch);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LettuceVersion && compareTo((LettuceVersion) o) == 0
        && qualifier.equals(((LettuceVersion) o).qualifier);
  }

  @Override
  public int hashCode() {
    return (major * 31 + minor) * 31 + patch;
  }

  @Override
  public String toString() {
    return major + "." + minor + "." + patch + (qualifier.isEmpty() ? "" : "." + qualifier);
  }

  /**
   * The version of the Lettuce that loaded {@link RedisClient}: its jar's manifest, else its Maven
   * metadata.
   *
   * @return the version text as found (e.g. {@code 6.6.0.RELEASE/643bd47}), or null if neither is there
   */
  static String onClassPath() {
    Package p = RedisClient.class.getPackage();
    String version = p == null ? null : p.getImplementationVersion();
    if (version != null) {
      return version;
    }
    URL pom = RedisClient.class.getResource("/META-INF/maven/io.lettuce/lettuce-core/pom.properties");
    if (pom == null) {
      return null;
    }
    try (InputStream in = pom.openStream()) {
      Properties props = new Properties();
      props.load(in);
      return props.getProperty("version");
    } catch (IOException unreadable) {
      return null;
    }
  }

  /**
   * Refuses the Lettuce on the class path if it is older than {@link #FLOOR}.
   *
   * @throws IllegalStateException if it is older, naming the version found, the range supported and how
   *     to select another
   */
  static void requireSupported() {
    requireSupported(onClassPath());
  }

  /**
   * @param found the version text found, or null if none could be read
   * @throws IllegalStateException if {@code found} is a version older than {@link #FLOOR}
   */
  static void requireSupported(String found) {
    String warning = check(found);
    if (warning != null && warned.add(warning)) {
      log.warn(warning);
    }
  }

  /**
   * @param found the version text found, or null if none could be read
   * @return the warning to log once, or null if {@code found} is within the tested range
   * @throws IllegalStateException if {@code found} is a version older than {@link #FLOOR}
   */
  static String check(String found) {
    Optional<LettuceVersion> version = parse(found);
    if (version.isEmpty()) {
      return "Cannot tell which Lettuce is on the class path (version " + (found == null ? "not recorded in its jar"
          : "'" + found + "'") + "); Locksmith needs Lettuce " + FLOOR + " or newer and was tested up to "
          + NEWEST_TESTED;
    }
    LettuceVersion v = version.get();
    if (v.compareTo(FLOOR) < 0) {
      throw new IllegalStateException(refusal(found, v));
    }
    if (v.major > NEWEST_TESTED.major) {
      return "Lettuce " + found + " is on the class path; Locksmith was tested on Lettuce " + FLOOR + " to "
          + NEWEST_TESTED + ". A new major line may have removed methods Locksmith calls: run your tests, or pin"
          + " io.lettuce:lettuce-core " + NEWEST_TESTED;
    }
    return null;
  }

  /** The message for a Lettuce older than the floor: what was found, what works, and how to get it. */
  static String refusal(String found, LettuceVersion v) {
    return "Lettuce " + found + " is on the class path, but locksmith-redis needs Lettuce " + FLOOR + " or newer"
        + " (tested up to " + NEWEST_TESTED + ")"
        + (v.major == 6 ? "; Spring Boot 3.3 and older manage Lettuce 6.3 or older" : "") + ". Select a newer"
        + " Lettuce: with Spring Boot's dependency management set the property lettuce.version to " + FLOOR
        + " or newer (Maven <properties>, Gradle ext['lettuce.version']), or move to Spring Boot 3.5 or 4;"
        + " otherwise declare io.lettuce:lettuce-core " + FLOOR + " or newer as a dependency of your own.";
  }
}
