package io.locksmith.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * A data source over a real database that can hold back the reply of one statement (or one commit) after
 * the database has executed it: the work is applied, and the caller's JDBC call returns only when the
 * test says so, as a reply delayed on the network or a commit stalled on a synchronous standby would.
 * Arm it with {@link #holdAfter(Predicate)} or {@link #holdAfterCommit()}; the next matching call runs,
 * then blocks until {@link Hold#deliver()}. Thread-safe.
 */
final class HeldReplies extends ForwardingDataSource {
  private final AtomicReference<Hold> armed = new AtomicReference<>();

  static final Predicate<String> COMMIT = sql -> sql.equals("COMMIT");

  /** One held reply. */
  static final class Hold {
    private final Predicate<String> sql;
    private final CountDownLatch reached = new CountDownLatch(1);
    private final CountDownLatch delivered = new CountDownLatch(1);

    private Hold(Predicate<String> sql) {
      this.sql = sql;
    }

    /** @return whether the reply is being held, within the given time */
    boolean awaitHeld(long millis) throws InterruptedException {
      return reached.await(millis, TimeUnit.MILLISECONDS);
    }

    /** Lets the held reply return. */
    void deliver() {
      delivered.countDown();
    }
  }

  HeldReplies(DataSource target) {
    super(target);
  }

  /** The next statement whose SQL matches is executed, then its reply held until {@link Hold#deliver()}. */
  Hold holdAfter(Predicate<String> sql) {
    Hold h = new Hold(sql);
    if (!armed.compareAndSet(null, h)) {
      throw new IllegalStateException("a hold is armed already");
    }
    return h;
  }

  /** The next {@code Connection.commit()} is executed, then its return held until {@link Hold#deliver()}. */
  Hold holdAfterCommit() {
    return holdAfter(COMMIT);
  }

  private void maybeHold(String sql) {
    Hold h = armed.get();
    if (h != null && h.sql.test(sql) && armed.compareAndSet(h, null)) {
      h.reached.countDown();
      try {
        if (!h.delivered.await(30, TimeUnit.SECONDS)) {
          throw new IllegalStateException("a held reply was never delivered");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
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
      switch (m.getName()) {
        case "prepareStatement" -> {
          PreparedStatement ps = (PreparedStatement) invoke(c, m, args);
          return statement(ps, (String) args[0]);
        }
        case "commit" -> {
          Object r = invoke(c, m, args);
          maybeHold("COMMIT");
          return r;
        }
        case "unwrap" -> {
          return ((Class<?>) args[0]).isInstance(c) ? c : invoke(c, m, args);
        }
        default -> {
          return invoke(c, m, args);
        }
      }
    };
    return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, h);
  }

  private PreparedStatement statement(PreparedStatement ps, String sql) {
    InvocationHandler h = (proxy, m, args) -> {
      Object r = invoke(ps, m, args);
      if (m.getName().startsWith("execute")) {
        maybeHold(sql);
      }
      return r;
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
