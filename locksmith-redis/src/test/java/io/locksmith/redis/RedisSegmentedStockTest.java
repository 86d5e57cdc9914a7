package io.locksmith.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.locksmith.LockClient;
import io.locksmith.recipes.StockStore;
import io.locksmith.tck.StockSellerProcess;
import io.locksmith.tck.StockStoreTck;
import io.locksmith.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The stock contract with Redis locks and {@link RedisStockStore}, locks and stock on two servers. */
class RedisSegmentedStockTest extends StockStoreTck {
  @RegisterExtension
  static final RedisServerExtension LOCKS = new RedisServerExtension();
  @RegisterExtension
  static final RedisServerExtension DATA = new RedisServerExtension();
  private static Fixture data;

  @BeforeAll
  static void connect() {
    data = new Fixture(LOCKS.server().uri() + " " + DATA.server().uri());
  }

  @AfterAll
  static void disconnect() {
    data.close();
  }

  @Override
  protected LockClient newClient() {
    return RedisLockClient.create(LOCKS.server().uri());
  }

  @Override
  protected StockStore store() {
    return data.store();
  }

  @Override
  protected ChildFixture childFixture() {
    return new ChildFixture(Fixture.class, LOCKS.server().uri() + " " + DATA.server().uri());
  }

  /** A child JVM's locks and stock: argument {@code "<locks URI> <stock URI>"}. */
  public static final class Fixture implements StockSellerProcess.Fixture {
    private final RedisLockClient locks;
    private final RedisClient dataClient;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisStockStore store;

    public Fixture(String uris) {
      String[] u = uris.split(" ");
      locks = RedisLockClient.create(u[0]);
      dataClient = RedisClient.create(u[1]);
      connection = dataClient.connect();
      store = RedisStockStore.of(connection.sync());
    }

    @Override
    public LockClient lockClient() {
      return locks;
    }

    @Override
    public StockStore store() {
      return store;
    }

    @Override
    public void close() {
      connection.close();
      dataClient.shutdown();
      locks.close();
    }
  }
}
