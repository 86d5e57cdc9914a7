package io.locksmith.cli;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A data source that opens a connection per call through {@link DriverManager}, for the operator
 * commands' few statements ({@code --jdbc-url}). The password comes from the environment variable
 * {@code LOCKSMITH_JDBC_PASSWORD} or the URL, never from the command line. Thread-safe.
 */
final class UrlDataSource implements DataSource {
  private final String url;
  private final Properties properties = new Properties();

  UrlDataSource(String url, String user, String password) {
    this.url = url;
    if (user != null) {
      properties.setProperty("user", user);
    }
    if (password != null) {
      properties.setProperty("password", password);
    }
  }

  /** @return the URL without its query (which may hold a password): safe to print */
  static String redact(String url) {
    int q = url.indexOf('?');
    int semi = url.indexOf(';');
    int cut = q < 0 ? semi : semi < 0 ? q : Math.min(q, semi);
    return cut < 0 ? url : url.substring(0, cut);
  }

  @Override
  public Connection getConnection() throws SQLException {
    return DriverManager.getConnection(url, properties);
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    return DriverManager.getConnection(url, username, password);
  }

  @Override
  public PrintWriter getLogWriter() {
    return null;
  }

  @Override
  public void setLogWriter(PrintWriter out) {
    // not used
  }

  @Override
  public void setLoginTimeout(int seconds) {
    DriverManager.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() {
    return DriverManager.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    throw new SQLException("not a wrapper");
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return false;
  }
}
