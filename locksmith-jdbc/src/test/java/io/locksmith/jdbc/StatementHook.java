package io.locksmith.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * A data source over a real database that runs a callback just before the next statement whose SQL
 * matches is executed, on the caller's thread, while the caller's transaction is open: the test puts
 * another session's work exactly between two statements of one transaction, with no timing. One-shot:
 * {@link #before} arms it once. Thread-safe.
 */
final class StatementHook extends ForwardingDataSource {
  /** Work another session does from the hook. */
  @FunctionalInterface
  interface Callback {
    void run() throws Exception;
  }

  private record Armed(Predicate<String> sql, Callback callback) {}

  private final AtomicReference<Armed> armed = new AtomicReference<>();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private volatile int ran;

  StatementHook(DataSource target) {
    super(target);
  }

  /** The next statement whose SQL matches first runs {@code callback}, then executes. */
  void before(Predicate<String> sql, Callback callback) {
    if (!armed.compareAndSet(null, new Armed(sql, callback))) {
      throw new IllegalStateException("a hook is armed already");
    }
  }

  /**
   * @return how many times a hook ran
   * @throws AssertionError if a callback failed (its failure is the cause)
   */
  int ran() {
    Throwable t = failure.get();
    if (t != null) {
      throw new AssertionError("the statement hook failed: " + t, t);
    }
    return ran;
  }

  private void maybeRun(String sql) {
    Armed a = armed.get();
    if (a != null && a.sql().test(sql) && armed.compareAndSet(a, null)) {
      try {
        a.callback().run();
      } catch (Throwable t) {
        failure.set(t);
      }
      ran++;
    }
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
      if (m.getName().equals("prepareStatement")) {
        return statement((PreparedStatement) invoke(c, m, args), (String) args[0]);
      }
      if (m.getName().equals("unwrap")) {
        return ((Class<?>) args[0]).isInstance(c) ? c : invoke(c, m, args);
      }
      return invoke(c, m, args);
    };
    return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, h);
  }

  private PreparedStatement statement(PreparedStatement ps, String sql) {
    InvocationHandler h = (proxy, m, args) -> {
      if (m.getName().startsWith("execute")) {
        maybeRun(sql);
      }
      return invoke(ps, m, args);
    };
    return (PreparedStatement) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {PreparedStatement.class}, h);
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
