package io.locksmith.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.Lease;
import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.postgres.PostgresServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 23, item 10: a client process whose wall clock is a day ahead or a day behind still gets
 * correct expiries, because the database clock alone judges them. The client runs in a child JVM
 * whose {@link ShiftedWallClock} agent shifts every wall-clock read of every non-JDK class in it
 * (locksmith, the PostgreSQL driver, HikariCP, the test's own classes); the test first proves the
 * shift took (eight kinds of read in the child are the offset away from this JVM's clock), then the
 * child takes a fixed lease and this JVM, with a true clock, checks that the stored expiry is the
 * lease length ahead of the database clock, that the lock is refused while the lease runs and taken
 * over once it ran out (not a day early, not a day late), and that the child sees its lease end.
 *
 * <p>Had any code in the client computed an expiry from its own clock and written it to the row, the
 * stored expiry would be a day off and the first check fails (seen with a throwaway variant of
 * {@link SkewedClientProcess}; see docs/testing.md). {@link JdbcClockSkewTest} covers the other way a
 * skew can leak in: database sessions in distant time zones.
 *
 * <p>Real time is what is measured (the database clock ends the lease), so the lease is short, 0.5 s; the
 * checks "the lease still runs" must come within it, and a child run whose checks came too late (the
 * stored expiry had passed, by the database clock, before they ran) is done again with twice the lease.
 * An expiry a day off never looks like that: it is a day away from the database clock.
 */
class JdbcClientWallClockTest {
  @RegisterExtension
  static final SharedTopology<PostgresServer> PG = PostgresServer.shared();

  private static final long FIRST_LEASE_MS = 500;
  private static final long LAST_LEASE_MS = 4000;
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

  @TempDir
  Path tempDir;

  @ParameterizedTest(name = "client wall clock off by {0} ms")
  @ValueSource(longs = {86_400_000L, -86_400_000L})
  void expiriesFollowTheDatabaseClock(long offsetMillis) throws Exception {
    List<String> missed = new java.util.ArrayList<>();
    for (long lease = FIRST_LEASE_MS; lease <= LAST_LEASE_MS; lease *= 2) {
      String late = childRun(offsetMillis, lease);
      if (late == null) {
        return;
      }
      missed.add(lease + " ms: " + late);
      System.out.println("JdbcClientWallClockTest: the checks came too late for a " + lease + " ms lease (" + late
          + "); again with twice that");
    }
    throw new AssertionError("the checks came too late for every lease tried: " + missed);
  }

  /** @return null if every check ran and passed, or why the checks came after the lease ended */
  private String childRun(long offsetMillis, long leaseMs) throws Exception {
    String url = PG.get().jdbcUrl();
    String name = "wallclock/" + offsetMillis + "/" + System.nanoTime();
    DataSource pool = TestDatabases.pool(PG.get());
    try (JdbcLockClient client = JdbcLockClient.builder().dataSource(pool).createTableIfMissing().build()) {
      // warmed up (class loading, prepared statements) so that the checks within the lease are prompt
      client.lock(name + "/warm-up").tryAcquire().orElseThrow().release();
      String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
      Path childErr = tempDir.resolve("child.err");
      long startedAt = System.currentTimeMillis();
      Process child = new ProcessBuilder(List.of(java, "-javaagent:" + agentJar() + "=" + offsetMillis,
          "-cp", System.getProperty("java.class.path"), SkewedClientProcess.class.getName(),
          url, "postgres", name, Long.toString(leaseMs)))
          .redirectError(childErr.toFile()).start();
      try {
        Lines out = new Lines(child);
        // 1. the agent works: every kind of read in the child is the offset away from the true clock
        // (the same machine's clock, read by this JVM just before the start and just after the line)
        long[] reads = Arrays.stream(out.next("CLOCK ", childErr).split(" ")).mapToLong(Long::parseLong).toArray();
        long readAt = System.currentTimeMillis();
        assertThat(reads).hasSize(8);
        for (long read : reads) {
          assertThat(read - offsetMillis).as("a shifted wall-clock read in the child").isBetween(startedAt, readAt);
        }

        // 2. the child was granted its lease
        String[] granted = out.next("GRANTED ", childErr).split(" ");
        long childToken = Long.parseLong(granted[0]);
        long childRemaining = Long.parseLong(granted[1]);
        if (childRemaining == 0) {
          return "the child printed its grant after its lease ended";
        }
        assertThat(childRemaining).as("the child's own view of its new lease").isBetween(1L, leaseMs);
        // 3. the row's expiry by the database clock: the child was granted before we read its line, so at
        // most the lease remains; an expiry computed from the child's clock would be a day off either way.
        // Up to 0 ms (and more than a minute ago), the lease ran out before we looked: too late, not wrong.
        long queriedAt = System.nanoTime();
        long storedRemaining = storedRemainingMillis(pool, name);
        if (storedRemaining <= 0 && storedRemaining > -READ_TIMEOUT.toMillis()) {
          return "queried " + -storedRemaining + " ms after the stored expiry";
        }
        assertThat(storedRemaining).as("expiry in the row minus the database clock, ms").isBetween(1L, leaseMs);
        // refused while the lease runs; granted, it must be at or after the stored expiry (5 ms for
        // flooring to milliseconds and the two clocks), which only a slow check reaches
        Optional<Lease> early = client.lock(name).tryAcquire();
        long checkedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - queriedAt);
        if (early.isPresent()) {
          early.get().release();
          assertThat(checkedAfter).as("granted %d ms after the query, before the stored expiry", checkedAfter)
              .isGreaterThanOrEqualTo(storedRemaining - 5);
          return "refusal checked " + checkedAfter + " ms after the query, the lease had " + storedRemaining + " ms left";
        }

        // 4. taken over once it ran out by the database clock
        // the waiter is bounded at the lease plus 5 s for wake-up and scheduling on a loaded machine;
        // an expiry a day late would not be granted within it
        Optional<Lease> next = client.lock(name).tryAcquire(Duration.ofMillis(leaseMs + 5000));
        long takenAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - queriedAt);
        assertThat(next).as("taken over after the child's lease ran out").isPresent();
        // the database read its clock after queriedAt, so the row cannot expire before queriedAt +
        // storedRemaining in real time (less up to 1 ms of flooring to milliseconds; 5 ms allowed)
        assertThat(takenAfter).as("ms from the query to the takeover: no early expiry")
            .isGreaterThanOrEqualTo(storedRemaining - 5);
        assertThat(next.get().fencingToken()).isGreaterThan(childToken);

        // 5. the child, with its shifted clock, sees its lease over too (its monotonic validity elapsed)
        Writer in = new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8);
        in.write("STATE\n");
        in.flush();
        String[] state = out.next("STATE ", childErr).split(" ");
        assertThat(state[0]).as("the child's lease state after the takeover").isEqualTo("LOST");
        assertThat(Long.parseLong(state[1])).isZero();
        next.get().release();
        in.close();

        String rewritten = out.next("REWRITTEN ", childErr);
        String failed = out.next("FAILED ", childErr);
        System.out.println("JdbcClientWallClockTest offset " + offsetMillis + " ms: child granted with "
            + childRemaining + " ms left, row expiry " + storedRemaining + " ms ahead of the database clock, taken over "
            + takenAfter + " ms later; classes rewritten: " + rewritten);
        assertThat(failed).as("classes the agent could not rewrite").isEqualTo("[]");
        // the agent reached the test's class and the JDBC driver's (HikariCP's only such read is in a
        // clock source it does not load on Linux, so the pool is covered but shows no rewritten class)
        assertThat(rewritten).contains(SkewedClientProcess.class.getName().replace('.', '/'))
            .contains("org/postgresql/");
        assertThat(child.waitFor(10, TimeUnit.SECONDS)).as("child exits").isTrue();
        assertThat(child.exitValue()).isZero();
        return null;
      } finally {
        child.destroyForcibly();
      }
    }
  }

  private static long storedRemainingMillis(DataSource pool, String name) throws Exception {
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT expires_at - (FLOOR(EXTRACT(EPOCH FROM clock_timestamp())"
            + " * 1000))::BIGINT FROM " + JdbcLockClient.DEFAULT_TABLE + " WHERE lock_name = ? AND owner IS NOT NULL")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).as("the child's row").isTrue();
        return rs.getLong(1);
      }
    }
  }

  /** A manifest-only jar naming the agent class, which the child finds on its class path. */
  private Path agentJar() throws IOException {
    Path jar = tempDir.resolve("shifted-wall-clock-agent.jar");
    if (!Files.exists(jar)) {
      Manifest manifest = new Manifest();
      manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
      manifest.getMainAttributes().putValue("Premain-Class", ShiftedWallClock.class.getName());
      try (OutputStream file = Files.newOutputStream(jar); JarOutputStream unused = new JarOutputStream(file, manifest)) {
        // the manifest is all the jar holds
      }
    }
    return jar;
  }

  /** The child's stdout lines, read by a daemon thread so that each wait has a timeout. */
  private static final class Lines {
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    Lines(Process child) {
      Thread reader = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line = r.readLine(); line != null; line = r.readLine()) {
            lines.add(line);
          }
        } catch (IOException e) {
          lines.add("READ FAILED " + e);
        }
      }, "wallclock-child-stdout");
      reader.setDaemon(true);
      reader.start();
    }

    /** @return the rest of the next line starting with {@code prefix}; other lines are skipped */
    String next(String prefix, Path childErr) throws Exception {
      long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
      while (true) {
        String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (line == null) {
          throw new AssertionError("no '" + prefix.trim() + "' line from the child within " + READ_TIMEOUT
              + "; its stderr:\n" + (Files.exists(childErr) ? Files.readString(childErr) : ""));
        }
        if (line.startsWith(prefix)) {
          return line.substring(prefix.length()).trim();
        }
      }
    }
  }
}
