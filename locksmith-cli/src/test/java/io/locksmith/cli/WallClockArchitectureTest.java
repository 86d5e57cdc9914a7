package io.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 23, item 10: leases are judged by the server's clock (Redis TTLs, the database's {@code
 * clock_timestamp()}, ZooKeeper sessions) and validity by the monotonic {@code Ticker}; a client whose
 * wall clock is far off must not get other expiries. This test reads the bytecode of every backend's
 * main classes (core with its lease machinery, redis, jdbc, zookeeper; this module depends on all of
 * them) and fails on any call that reads the wall clock, unless the calling class is in {@link #ALLOWED}
 * with the reason why that read cannot decide a grant or an expiry. A method reference ({@code
 * Instant::now}) is caught too: it is a method reference in the constant pool as well.
 */
@Tag("unit")
class WallClockArchitectureTest {
  /** Owner class / method name of the calls that read the wall clock. */
  private static final Set<String> WALL_CLOCK = Set.of(
      "java/lang/System.currentTimeMillis",
      "java/time/Instant.now", "java/time/Clock.systemUTC", "java/time/Clock.systemDefaultZone",
      "java/time/Clock.system", "java/time/LocalDateTime.now", "java/time/LocalDate.now",
      "java/time/LocalTime.now", "java/time/ZonedDateTime.now", "java/time/OffsetDateTime.now",
      "java/time/OffsetTime.now", "java/util/Calendar.getInstance", "java/util/Date.<init>()V");

  /**
   * Calling class → wall-clock call it may make, each with its reason. Keep it short: every entry is a
   * place where a clock step or skew on this host is harmless.
   */
  private static final Map<String, Set<String>> ALLOWED = Map.of(
      // inspect() shows how long a holder's lease has left, from the node's creation time (the ZooKeeper
      // server's wall clock, the only time a node carries): an estimate for operators; grants and expiry
      // are decided by the session, never by this number
      "io/locksmith/zookeeper/QueueOps", Set.of("java/lang/System.currentTimeMillis"));

  private static final List<String> SCANNED = List.of("io/locksmith/", "io/locksmith/internal/",
      "io/locksmith/spi/", "io/locksmith/injvm/", "io/locksmith/redis/", "io/locksmith/jdbc/",
      "io/locksmith/zookeeper/");

  @Test
  void noBackendReadsTheWallClockOutsideTheAllowList() throws Exception {
    List<String> locations = List.of(location("io.locksmith.internal.DefaultLockClient"),
        location("io.locksmith.redis.RedisLockClient"), location("io.locksmith.jdbc.JdbcLockClient"),
        location("io.locksmith.zookeeper.ZooKeeperLockClient"));
    Set<String> violations = new TreeSet<>();
    Set<String> allowedSeen = new TreeSet<>();
    int classes = 0;
    for (String location : locations) {
      for (Map.Entry<String, byte[]> c : classFiles(location)) {
        String owner = c.getKey().substring(0, c.getKey().length() - ".class".length());
        if (SCANNED.stream().noneMatch(p -> owner.startsWith(p) && owner.indexOf('/', p.length()) < 0)) {
          continue;
        }
        classes++;
        String outer = owner.contains("$") ? owner.substring(0, owner.indexOf('$')) : owner;
        for (String call : methodRefs(c.getValue())) {
          String bare = call.substring(0, call.indexOf('('));
          if (!WALL_CLOCK.contains(bare) && !WALL_CLOCK.contains(call)) {
            continue;
          }
          if (ALLOWED.getOrDefault(outer, Set.of()).contains(bare)) {
            allowedSeen.add(outer + " -> " + bare);
          } else {
            violations.add(owner + " -> " + call);
          }
        }
      }
    }
    assertThat(classes).as("main classes scanned (the backends are on the class path)").isGreaterThan(100);
    assertThat(violations).as("wall-clock reads in the backends' main code").isEmpty();
    assertThat(allowedSeen).as("every allow-list entry is still needed").hasSize(
        ALLOWED.values().stream().mapToInt(Set::size).sum());
  }

  /** The check itself can fail: a class that calls {@code System.currentTimeMillis()} is found. */
  @Test
  void theScanFindsAWallClockCall() throws Exception {
    String self = WallClockArchitectureTest.class.getName().replace('.', '/') + "$Offender.class";
    try (InputStream in = WallClockArchitectureTest.class.getClassLoader().getResourceAsStream(self)) {
      assertThat(methodRefs(in.readAllBytes())).contains("java/lang/System.currentTimeMillis()J",
          "java/time/Instant.now()Ljava/time/Instant;");
    }
  }

  @SuppressWarnings("unused")
  private static final class Offender {
    long now() {
      return System.currentTimeMillis();
    }

    java.util.function.Supplier<java.time.Instant> clock() {
      return java.time.Instant::now;
    }
  }

  private static String location(String className) throws ClassNotFoundException, URISyntaxException {
    return Path.of(Class.forName(className).getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
  }

  private static List<Map.Entry<String, byte[]>> classFiles(String location) throws IOException {
    List<Map.Entry<String, byte[]>> out = new ArrayList<>();
    Path path = Path.of(location);
    if (Files.isDirectory(path)) {
      try (Stream<Path> files = Files.walk(path)) {
        for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
          out.add(Map.entry(path.relativize(f).toString().replace('\\', '/'), Files.readAllBytes(f)));
        }
      }
    } else {
      try (JarFile jar = new JarFile(path.toFile())) {
        for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
          JarEntry entry = e.nextElement();
          if (entry.getName().endsWith(".class") && !entry.getName().startsWith("META-INF/")) {
            try (InputStream in = jar.getInputStream(entry)) {
              out.add(Map.entry(entry.getName(), in.readAllBytes()));
            }
          }
        }
      }
    }
    return out;
  }

  /**
   * The methods a class file refers to, as {@code owner.name(descriptor)}, read from its constant pool
   * (JVMS §4.4): every call, and every method reference behind a lambda or {@code ::}, is one of them.
   */
  static List<String> methodRefs(byte[] classFile) throws IOException {
    DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(classFile));
    if (in.readInt() != 0xCAFEBABE) {
      throw new IOException("not a class file");
    }
    in.readUnsignedShort();
    in.readUnsignedShort();
    int count = in.readUnsignedShort();
    String[] utf8 = new String[count];
    int[] classNameIndex = new int[count];
    int[][] ref = new int[count][];
    int[][] nameAndType = new int[count][];
    for (int i = 1; i < count; i++) {
      int tag = in.readUnsignedByte();
      switch (tag) {
        case 1 -> utf8[i] = in.readUTF();
        case 7 -> classNameIndex[i] = in.readUnsignedShort();
        case 8, 16, 19, 20 -> in.readUnsignedShort();
        case 3, 4 -> in.readInt();
        case 5, 6 -> {
          in.readLong();
          i++; // takes two slots
        }
        case 9, 17, 18 -> in.readInt();
        case 10, 11 -> ref[i] = new int[] {in.readUnsignedShort(), in.readUnsignedShort()};
        case 12 -> nameAndType[i] = new int[] {in.readUnsignedShort(), in.readUnsignedShort()};
        case 15 -> {
          in.readUnsignedByte();
          in.readUnsignedShort();
        }
        default -> throw new IOException("unknown constant pool tag " + tag);
      }
    }
    List<String> out = new ArrayList<>();
    for (int i = 1; i < count; i++) {
      if (ref[i] != null) {
        int[] nt = nameAndType[ref[i][1]];
        out.add(utf8[classNameIndex[ref[i][0]]] + "." + utf8[nt[0]] + utf8[nt[1]]);
      }
    }
    return out;
  }
}
