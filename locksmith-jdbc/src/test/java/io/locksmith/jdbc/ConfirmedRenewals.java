package io.locksmith.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * A data source over a real database that notes when the newest renewal the database confirmed was sent
 * ({@link System#nanoTime()} just before the statement went out). The database starts a renewed lease
 * inside that statement, so the lease it set cannot end before that moment plus the lease time: a test
 * can judge a takeover against it without trusting any thread to be on time. Only the lock renewal of
 * the default table ({@link Sql#renew}, not the release, which also sets the expiry) counts, and only when
 * it changed a row. Thread-safe.
 */
final class ConfirmedRenewals extends ForwardingDataSource {
  private final String renewSql;
  private final AtomicLong lastConfirmedSend = new AtomicLong(Long.MIN_VALUE);

  ConfirmedRenewals(DataSource target, JdbcDialect dialect) {
    super(target);
    this.renewSql = new Sql(dialect, JdbcLockClient.DEFAULT_TABLE).renew;
  }

  /** @return when the newest confirmed renewal was sent ({@code System.nanoTime()}), or {@code orElse} */
  long lastConfirmedSend(long orElse) {
    long t = lastConfirmedSend.get();
    return t == Long.MIN_VALUE ? orElse : t;
  }

  private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private Connection wrap(Connection c) {
    InvocationHandler h = (proxy, m, args) -> {
      Object r = invoke(c, m, args);
      if (m.getName().equals("prepareStatement") && renewSql.equals(args[0])) {
        return renewal((PreparedStatement) r);
      }
      return r;
    };
    return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, h);
  }

  private PreparedStatement renewal(PreparedStatement ps) {
    InvocationHandler h = (proxy, m, args) -> {
      long sent = System.nanoTime();
      Object r = invoke(ps, m, args);
      if (m.getName().startsWith("execute") && changedARow(r)) {
        lastConfirmedSend.accumulateAndGet(sent, Math::max);
      }
      return r;
    };
    return (PreparedStatement) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {PreparedStatement.class}, h);
  }

  private static boolean changedARow(Object result) {
    if (result instanceof int[] counts) {
      for (int n : counts) {
        if (n > 0) {
          return true;
        }
      }
      return false;
    }
    return result instanceof Integer n && n > 0;
  }

  @Override
  public Connection getConnection() throws SQLException {
    return wrap(target.getConnection());
  }

  @Override
  public Connection getConnection(String user, String password) throws SQLException {
    return wrap(target.getConnection(user, password));
  }
}
