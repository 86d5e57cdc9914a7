package io.locksmith.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.LockClient;
import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.redis.RedisLockClient;
import io.locksmith.zookeeper.ZooKeeperLockClient;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code locksmith server KIND} as a user runs it: a child JVM per server (all started at once, so their
 * start-ups overlap), its printed address used by a real Locksmith client and by the printed {@code inspect}
 * line, then SIGTERM ({@link Process#destroy()}), after which the JVM must have exited, the server must no
 * longer answer, and its files must be gone. Each child has a {@code java.io.tmpdir} of its own under
 * {@code target/}, so "gone" is checked on the whole directory, not only on what the command printed.
 */
class ServerCommandTest {
  private enum Kind { REDIS, SENTINEL, CLUSTER, ZOOKEEPER, POSTGRES, MARIADB }

  /** What the launchers keep between runs on purpose: extracted binaries, reused by the next start. */
  private static final List<String> CACHES = List.of("locksmith-redis-bin", "embedded-pg");
  /** Generous failure deadline for a start on a loaded machine (MariaDB unpacks 142 MB first). */
  private static final long START_SECONDS = 100;

  private static final Map<Kind, Child> CHILDREN = new EnumMap<>(Kind.class);

  /** A {@code locksmith server} child JVM and the lines it printed. */
  private static final class Child {
    final Process process;
    final Path tmp;
    final Path stderr;
    final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    final CompletableFuture<Void> ready = new CompletableFuture<>();

    Child(Process process, Path tmp, Path stderr) {
      this.process = process;
      this.tmp = tmp;
      this.stderr = stderr;
      Thread reader = new Thread(this::read, "server-output-" + process.pid());
      reader.setDaemon(true);
      reader.start();
    }

    private void read() {
      try (BufferedReader in = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          lines.add(line);
          if (line.startsWith("Running until Ctrl-C")) {
            ready.complete(null);
          }
        }
        ready.completeExceptionally(new AssertionError("the server command ended before it was ready"));
      } catch (IOException e) {
        ready.completeExceptionally(e);
      }
    }

    /** @return the value printed after {@code label}, e.g. {@code uri} */
    String value(String label) {
      return values(label).findFirst().orElseThrow(() -> new AssertionError("no '" + label + "' line in " + lines));
    }

    Stream<String> values(String label) {
      synchronized (lines) {
        return new ArrayList<>(lines).stream().map(String::trim).filter(l -> l.startsWith(label + " "))
            .map(l -> l.substring(label.length()).trim().split("\\s+")[0]);
      }
    }

    String describe() throws IOException {
      return "stdout:\n" + String.join("\n", lines) + "\nstderr:\n" + Files.readString(stderr);
    }
  }

  @BeforeAll
  static void startAll() throws IOException {
    Path root = Path.of("target", "server-command-test").toAbsolutePath();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    for (Kind kind : Kind.values()) {
      String name = kind.name().toLowerCase(Locale.ROOT);
      Path tmp = Files.createDirectories(root.resolve(name + "-tmp"));
      clean(tmp);
      Path stderr = root.resolve(name + ".stderr");
      List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
          "-Djava.io.tmpdir=" + tmp, "-cp", scriptClassPath(), Main.class.getName(), "server",
          name));
      if (kind != Kind.SENTINEL && kind != Kind.CLUSTER) {
        cmd.addAll(List.of("--port", "0"));
      }
      Process p = new ProcessBuilder(cmd).redirectError(stderr.toFile()).start();
      p.getOutputStream().close();
      CHILDREN.put(kind, new Child(p, tmp, stderr));
    }
  }

  /**
   * What {@code ./locksmith server …} runs on: the module's classes and its runtime dependencies (what the
   * shaded jar holds), plus the MariaDB binaries jar the script adds; not the test class path, which has
   * test-scoped jars the command does not ship (a test scope on a launcher once dropped it from the jar
   * unseen).
   */
  private static String scriptClassPath() throws IOException {
    Path target = Path.of("target").toAbsolutePath();
    return String.join(java.io.File.pathSeparator, target.resolve("classes").toString(),
        Files.readString(target.resolve("runtime.classpath")).strip(),
        Files.readString(target.resolve("mariadb-binaries.classpath")).strip());
  }

  /** Children a failed test left running: SIGTERM first, so that they stop their servers too. */
  @AfterAll
  static void stopLeftovers() throws InterruptedException {
    CHILDREN.values().forEach(c -> c.process.destroy());
    for (Child c : CHILDREN.values()) {
      if (!c.process.waitFor(60, TimeUnit.SECONDS)) {
        c.process.destroyForcibly();
      }
    }
  }

  @Test
  void redis() throws Exception {
    Child c = await(Kind.REDIS);
    String uri = c.value("uri");
    assertThat(uri).startsWith("redis://127.0.0.1:");
    try (RedisLockClient client = RedisLockClient.create(uri)) {
      lockAndInspect(client, "--uri", uri);
    }
    assertLoopbackOnly(URI.create(uri).getPort());
    stopAndCheck(c, URI.create(uri).getPort());
  }

  @Test
  void sentinel() throws Exception {
    Child c = await(Kind.SENTINEL);
    String uri = c.value("uri");
    assertThat(uri).startsWith("redis-sentinel://127.0.0.1:").contains("sentinelMasterId=");
    assertThat(c.values("replica").count()).isEqualTo(2);
    assertThat(c.values("sentinel").count()).isEqualTo(3);
    try (RedisLockClient client = RedisLockClient.create(uri)) {
      lockAndInspect(client, "--uri", uri);
    }
    stopAndCheck(c, URI.create(c.value("master")).getPort());
  }

  @Test
  void cluster() throws Exception {
    Child c = await(Kind.CLUSTER);
    String uri = c.value("uri");
    assertThat(uri).startsWith("redis-cluster://127.0.0.1:");
    assertThat(c.values("master").count()).isEqualTo(3);
    assertThat(c.values("replica").count()).isEqualTo(3);
    try (RedisLockClient client = RedisLockClient.create(uri)) {
      lockAndInspect(client, "--uri", uri);
    }
    stopAndCheck(c, URI.create(c.value("master")).getPort());
  }

  @Test
  void zookeeper() throws Exception {
    Child c = await(Kind.ZOOKEEPER);
    String uri = c.value("uri");
    assertThat(uri).startsWith("zookeeper://127.0.0.1:");
    int port = Integer.parseInt(uri.substring(uri.lastIndexOf(':') + 1));
    try (ZooKeeperLockClient client = ZooKeeperLockClient.create(uri)) {
      lockAndInspect(client, "--uri", uri);
    }
    assertLoopbackOnly(port);
    stopAndCheck(c, port);
  }

  @Test
  void postgres() throws Exception {
    jdbc(Kind.POSTGRES, "jdbc:postgresql://127.0.0.1:");
  }

  @Test
  void mariadb() throws Exception {
    jdbc(Kind.MARIADB, "jdbc:mariadb://127.0.0.1:");
  }

  private void jdbc(Kind kind, String prefix) throws Exception {
    Child c = await(kind);
    String url = c.value("jdbc-url");
    assertThat(url).startsWith(prefix);
    // the printed list line answers at once: the command created Locksmith's tables
    ByteArrayOutputStream listed = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(listed, true, StandardCharsets.UTF_8);
    assertThat(Main.run(new String[] {"list", "--jdbc-url", url}, print, print))
        .as(listed.toString(StandardCharsets.UTF_8)).isEqualTo(4); // 4: nothing held in the namespace yet
    // the printed user, and no password: what an application's configuration would hold
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(new UrlDataSource(url, c.value("user"), null))
        .createTableIfMissing().build()) {
      lockAndInspect(client, "--jdbc-url", url);
    }
    int port = Integer.parseInt(url.substring(prefix.length(), url.indexOf('/', prefix.length())));
    assertLoopbackOnly(port);
    stopAndCheck(c, port);
  }

  @Test
  void aTakenPortIsAOneLineErrorNamingPort() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      int code = Main.run(new String[] {"server", "redis", "--port", Integer.toString(taken.getLocalPort())},
          new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
      assertThat(code).isEqualTo(ServerCommand.FAILED);
      String message = err.toString(StandardCharsets.UTF_8);
      assertThat(message.lines().count()).isOne();
      assertThat(message).contains("port " + taken.getLocalPort() + " on 127.0.0.1 is in use", "--port 0");
      assertThat(out.size()).isZero();
    }
  }

  @Test
  void badCommandLinesAreUsageErrors() {
    PrintStream sink = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    assertThat(Main.run(new String[] {"server"}, sink, sink)).isEqualTo(2);
    assertThat(Main.run(new String[] {"server", "mongodb"}, sink, sink)).isEqualTo(2);
    assertThat(Main.run(new String[] {"server", "cluster", "--port", "7000"}, sink, sink)).isEqualTo(2);
    assertThat(Main.run(new String[] {"server", "redis", "--port", "70000"}, sink, sink)).isEqualTo(2);
  }

  private static Child await(Kind kind) throws Exception {
    Child c = CHILDREN.get(kind);
    try {
      c.ready.get(START_SECONDS, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError(kind + " did not report ready within " + START_SECONDS + " s\n" + c.describe(), e);
    }
    return c;
  }

  /** Takes a lock through the printed address, and finds it with the printed inspect line. */
  private static void lockAndInspect(LockClient client, String option, String address) throws Exception {
    Lease lease = client.lock("server-command-test").acquire();
    try {
      assertThat(lease.fencingToken()).isPositive();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
      assertThat(Main.run(new String[] {"inspect", option, address, "server-command-test"}, print, print))
          .as(out.toString(StandardCharsets.UTF_8)).isZero();
      assertThat(out.toString(StandardCharsets.UTF_8)).contains(Long.toString(lease.fencingToken()));
    } finally {
      assertThat(lease.release()).isTrue();
    }
  }

  /** SIGTERM: the JVM exits through its shutdown hook, the server is down, and nothing is left in tmp. */
  private static void stopAndCheck(Child c, int port) throws Exception {
    List<Path> data = c.values("data").map(Path::of).toList();
    assertThat(data).isNotEmpty().allMatch(Files::isDirectory);
    c.process.destroy();
    assertThat(c.process.waitFor(60, TimeUnit.SECONDS)).as("exited after SIGTERM").isTrue();
    assertThat(Files.readString(c.stderr)).contains("stopped, its data deleted");
    assertThat(data).noneMatch(Files::exists);
    try (Stream<Path> left = Files.list(c.tmp)) {
      assertThat(left.filter(p -> !CACHES.contains(p.getFileName().toString())).toList())
          .as("files left in the child's java.io.tmpdir").isEmpty();
    }
    assertThat(accepts(InetAddress.getLoopbackAddress(), port)).as("the server still answers on " + port)
        .isFalse();
  }

  /** The port answers on 127.0.0.1 and not on this host's other addresses (when it has one). */
  private static void assertLoopbackOnly(int port) throws SocketException {
    assertThat(accepts(InetAddress.getLoopbackAddress(), port)).isTrue();
    Optional<InetAddress> external = externalAddress();
    external.ifPresent(a -> assertThat(accepts(a, port)).as("listening on " + a.getHostAddress() + ":" + port)
        .isFalse());
  }

  private static Optional<InetAddress> externalAddress() throws SocketException {
    return NetworkInterface.networkInterfaces().filter(i -> {
      try {
        return i.isUp() && !i.isLoopback();
      } catch (SocketException e) {
        return false;
      }
    }).flatMap(NetworkInterface::inetAddresses).filter(a -> a instanceof Inet4Address).findFirst();
  }

  private static boolean accepts(InetAddress address, int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(address, port), 2000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static void clean(Path dir) throws IOException {
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.sorted(java.util.Comparator.reverseOrder()).filter(p -> !p.equals(dir))
          .filter(p -> CACHES.stream().noneMatch(cache -> dir.relativize(p).startsWith(cache)))
          .forEach(p -> p.toFile().delete());
    }
  }
}
