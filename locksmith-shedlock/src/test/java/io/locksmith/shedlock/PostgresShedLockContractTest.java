package io.locksmith.shedlock;

import io.locksmith.LockClient;
import com.zaxxer.hikari.HikariDataSource;
import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.testkit.postgres.PostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's own provider contract, unmodified, on PostgreSQL (JDBC lease locks by the database clock). */
class PostgresShedLockContractTest extends LocksmithShedLockContract {
  private static PostgresServer postgres;
  private static HikariDataSource pool;
  private static JdbcLockClient jobs;
  private static JdbcLockClient operator;
  private static LocksmithLockProvider provider;

  @BeforeAll
  static void start() {
    postgres = PostgresServer.start();
    pool = new HikariDataSource();
    pool.setJdbcUrl(postgres.jdbcUrl());
    pool.setUsername("postgres");
    pool.setMaximumPoolSize(20);
    jobs = JdbcLockClient.builder().dataSource(pool).createTableIfMissing().build();
    operator = JdbcLockClient.builder().dataSource(pool).build();
    provider = new LocksmithLockProvider(jobs);
  }

  @AfterAll
  static void stop() {
    provider.close();
    jobs.close();
    operator.close();
    pool.close();
    postgres.close();
  }

  @Override
  LocksmithLockProvider provider() {
    return provider;
  }

  @Override
  LockClient operator() {
    return operator;
  }
}
