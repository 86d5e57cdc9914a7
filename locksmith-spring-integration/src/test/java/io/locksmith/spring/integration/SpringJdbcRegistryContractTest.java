package io.locksmith.spring.integration;

import io.locksmith.testkit.SharedTopology;
import io.locksmith.testkit.h2.H2Database;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Control: the same contract on Spring Integration's own {@code JdbcLockRegistry} (6.5.6) over H2, with
 * Spring's DDL for {@code INT_LOCK} from its jar. Each registry has its own repository, hence its own
 * client id: two are two owners.
 */
class SpringJdbcRegistryContractTest extends LockRegistryContract {
  @RegisterExtension
  static final SharedTopology<H2Database> H2 = H2Database.shared();
  private static DataSource dataSource;

  @BeforeAll
  static void schema() throws Exception {
    dataSource = H2.get().dataSource();
    String ddl;
    try (InputStream in = DefaultLockRepository.class.getResourceAsStream(
        "/org/springframework/integration/jdbc/schema-h2.sql")) {
      ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
      for (String statement : ddl.split(";")) {
        if (statement.toUpperCase(Locale.ROOT).contains("INT_LOCK")) {
          s.execute(statement.replaceFirst("(?i)CREATE TABLE ", "CREATE TABLE IF NOT EXISTS "));
        }
      }
    }
  }

  @Override
  RenewableLockRegistry newRegistry(Duration ttl) {
    DefaultLockRepository repository = new DefaultLockRepository(dataSource);
    repository.setTransactionManager(new DataSourceTransactionManager(dataSource)); // as a context would
    if (ttl != null) {
      repository.setTimeToLive((int) ttl.toMillis());
    }
    repository.afterPropertiesSet();
    repository.afterSingletonsInstantiated();
    closeAfter(repository::close);
    return registryOver(repository, ttl);
  }

  /**
   * @return the registry over a repository whose timeToLive is {@code ttl}; SI 7's registry takes the ttl
   *     itself (its subclass overrides this)
   */
  JdbcLockRegistry registryOver(DefaultLockRepository repository, Duration ttl) {
    return new JdbcLockRegistry(repository);
  }

  /** Its locks are ReentrantLocks underneath: IllegalMonitorStateException, as ReentrantLock's. */
  @Override
  Class<? extends RuntimeException> notOwnerUnlockException() {
    return IllegalMonitorStateException.class;
  }

  /** Not the holder's thread: the underlying ReentrantLock's IllegalMonitorStateException. */
  @Override
  Class<? extends RuntimeException> renewNotHeldException() {
    return IllegalMonitorStateException.class;
  }

  /** An expired row stays its holder's until another client claims it: unlock deletes it quietly. */
  @Override
  boolean expiredUnclaimedUnlockThrows() {
    return false;
  }

  /** A contender claims a row older than its own timeToLive, whatever the holder's was. */
  @Override
  boolean expiryJudgedByTheHoldersLease() {
    return false;
  }
}
