package io.locksmith.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.locksmith.LockClient;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The lock of a {@code @DistributedLock @Transactional} method is taken before the transaction begins and
 * released after it commits: at commit time the lock must still be held, or another instance could read
 * the old row under the lock and overwrite the committed write.
 */
@Tag("unit")
class DistributedLockTransactionTest {

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, LocksmithAutoConfiguration.class))
      .withConfiguration(AutoConfigurations.of(BootLine.jdbcWithTransactions()))
      .withPropertyValues("locksmith.backend=in-jvm", "spring.datasource.url=jdbc:h2:mem:tx;DB_CLOSE_DELAY=-1",
          "spring.datasource.generate-unique-name=false")
      .withUserConfiguration(Beans.class);

  /** Writes a row and records, at commit, whether its lock was still held. */
  public static class Stock {
    final List<Boolean> heldAtCommit = new CopyOnWriteArrayList<>();
    JdbcTemplate jdbc;
    LockClient client;

    @DistributedLock(name = "stock:#{#p0}")
    @Transactional
    public void sell(String sku) {
      assertThat(TransactionSynchronizationManager.isActualTransactionActive()).isTrue();
      jdbc.update("update stock set qty = qty - 1 where sku = ?", sku);
      TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
        @Override
        public void afterCommit() {
          heldAtCommit.add(client.inspect("stock:" + sku).isPresent());
        }
      });
    }

    public List<Boolean> heldAtCommit() {
      return heldAtCommit;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    Stock stock(JdbcTemplate jdbc, LockClient client) {
      jdbc.execute("create table if not exists stock (sku varchar(20) primary key, qty int)");
      jdbc.update("merge into stock key (sku) values ('A', 10)");
      Stock s = new Stock();
      s.jdbc = jdbc;
      s.client = client;
      return s;
    }
  }

  /** A caller whose transaction the locked method joins. */
  public static class Caller {
    Stock stock;

    @Transactional
    public void sellTwice(String sku) {
      stock.sell(sku);
      stock.sell(sku);
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class CallerBeans {
    @Bean
    Caller caller(Stock stock) {
      Caller c = new Caller();
      c.stock = stock;
      return c;
    }
  }

  /** Transaction advisor made outermost. */
  @Configuration(proxyBeanMethods = false)
  @EnableTransactionManagement(order = 0)
  static class TransactionOutside {}

  @Test
  void theLockIsStillHeldWhenTheTransactionCommits() {
    runner.run(ctx -> {
      Stock stock = ctx.getBean(Stock.class);
      stock.sell("A");
      assertThat(stock.heldAtCommit()).containsExactly(true);
      assertThat(ctx.getBean(LockClient.class).inspect("stock:A")).as("released after the commit").isEmpty();
      assertThat(ctx.getBean(JdbcTemplate.class).queryForObject("select qty from stock where sku = 'A'", Integer.class)).isEqualTo(9);
    });
  }

  @Test
  void withTheTransactionAdvisorOutsideTheLockTheLockIsStillHeldUntilTheCommit() {
    // ordered the other way round, the transaction is still open when the locked call returns: the
    // release waits for its end (before issue 26 the lock was gone at commit: heldAtCommit was [false])
    runner.withUserConfiguration(TransactionOutside.class).run(ctx -> {
      Stock stock = ctx.getBean(Stock.class);
      stock.sell("A");
      assertThat(stock.heldAtCommit()).containsExactly(true);
      assertThat(ctx.getBean(LockClient.class).inspect("stock:A")).as("released after the commit").isEmpty();
    });
  }

  @Test
  void aJoinedTransactionKeepsTheLockUntilTheCallersCommit() {
    runner.withUserConfiguration(CallerBeans.class).run(ctx -> {
      Stock stock = ctx.getBean(Stock.class);
      ctx.getBean(Caller.class).sellTwice("A");
      assertThat(stock.heldAtCommit()).as("held at the caller's commit, once per joined call").containsExactly(true, true);
      assertThat(ctx.getBean(LockClient.class).inspect("stock:A")).as("released after the commit").isEmpty();
      assertThat(ctx.getBean(JdbcTemplate.class).queryForObject("select qty from stock where sku = 'A'", Integer.class)).isEqualTo(8);
    });
  }
}
