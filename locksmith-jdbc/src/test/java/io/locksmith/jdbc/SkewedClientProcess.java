package io.locksmith.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.locksmith.Lease;
import io.locksmith.LockOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Calendar;
import java.util.Date;

/**
 * The child JVM of {@link JdbcClientWallClockTest}, started with {@link ShiftedWallClock} as its agent.
 * Prints {@code CLOCK} and the epoch milliseconds of eight kinds of wall-clock read (each rewritten by
 * the agent), takes a fixed lease on PostgreSQL and prints {@code GRANTED <token> <remaining ms>}; then
 * answers each {@code STATE} line on stdin with {@code STATE <lease state> <remaining ms>} until stdin
 * closes, and finally prints {@code REWRITTEN <count> <classes>} and {@code FAILED <failures>}.
 * Arguments: JDBC URL, user, lock name, lease in milliseconds.
 */
final class SkewedClientProcess {
  private SkewedClientProcess() {}

  public static void main(String[] args) throws Exception {
    System.out.println("CLOCK " + System.currentTimeMillis() + " " + Instant.now().toEpochMilli() + " "
        + new Date().getTime() + " " + Clock.systemUTC().millis() + " " + Calendar.getInstance().getTimeInMillis()
        + " " + ZonedDateTime.now().toInstant().toEpochMilli() + " " + OffsetDateTime.now().toInstant().toEpochMilli()
        + " " + LocalDateTime.now().atZone(ZoneId.systemDefault()).toInstant().toEpochMilli());
    System.out.flush();
    Duration leaseTime = Duration.ofMillis(Long.parseLong(args[3]));
    try (HikariDataSource pool = TestDatabases.newPool(args[0], args[1], 2);
        JdbcLockClient client = JdbcLockClient.builder().dataSource(pool).createTableIfMissing().build()) {
      // warm up (class loading, agent rewriting, prepared statements) so that the measured lease is
      // granted promptly and most of it is left when the parent checks it
      client.lock(args[2] + "/warm-up", LockOptions.fixed(leaseTime)).acquire(Duration.ofSeconds(30)).release();
      Lease lease = client.lock(args[2], LockOptions.fixed(leaseTime)).acquire(Duration.ofSeconds(30));
      System.out.println("GRANTED " + lease.fencingToken() + " " + lease.remainingValidity().toMillis());
      System.out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.equals("STATE")) {
          System.out.println("STATE " + lease.state() + " " + lease.remainingValidity().toMillis());
          System.out.flush();
        }
      }
    }
    System.out.println("REWRITTEN " + ShiftedWallClock.rewritten().size() + " " + ShiftedWallClock.rewritten());
    System.out.println("FAILED " + ShiftedWallClock.failures());
    System.out.flush();
  }
}
