package io.locksmith.spring;

import io.locksmith.ClientOptions;
import io.locksmith.LockClient;
import io.locksmith.jdbc.JdbcLockClient;
import io.locksmith.jdbc.JdbcLockMode;
import java.util.Locale;
import javax.sql.DataSource;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** JDBC clients from properties; loaded only when locksmith-jdbc is present. */
final class JdbcClients {

  private JdbcClients() {}

  static LockClient jdbc(LockClientFactory f, String clientName, String prefix, LockClientProperties p,
      ClientOptions options, BeanFactory beans) {
    LockClientProperties.Jdbc j = p.getJdbc();
    DataSource dataSource;
    if (LockClientFactory.hasText(j.getDataSource())) {
      try {
        dataSource = beans.getBean(j.getDataSource(), DataSource.class);
      } catch (BeansException e) {
        throw new InvalidConfigurationPropertyValueException(prefix + ".jdbc.data-source", j.getDataSource(),
            "no DataSource bean of that name: " + e.getMessage());
      }
    } else {
      dataSource = beans.getBeanProvider(DataSource.class).getIfUnique();
      if (dataSource == null) {
        throw new InvalidConfigurationPropertyValueException(prefix + ".jdbc.data-source", null,
            "the jdbc backend needs the application's DataSource: none or several found, name one");
      }
    }
    JdbcLockMode mode;
    try {
      mode = JdbcLockMode.valueOf(j.getMode().trim().toUpperCase(Locale.ROOT).replace('-', '_'));
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new InvalidConfigurationPropertyValueException(prefix + ".jdbc.mode", j.getMode(), "must be one of LEASE, ROW_LOCK, ADVISORY");
    }
    JdbcLockClient.Builder b = JdbcLockClient.builder().dataSource(dataSource).table(j.getTable()).mode(mode)
        .commandTimeout(j.getCommandTimeout()).options(options);
    if (j.isCreateTable()) {
      b.createTableIfMissing();
    }
    f.customize(clientName, b);
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      String m = e.getMessage() == null ? "" : e.getMessage().toLowerCase(Locale.ROOT);
      String property = m.contains("timeout") ? "command-timeout" : m.contains("mode") ? "mode" : "table";
      Object value = property.equals("command-timeout") ? j.getCommandTimeout() : property.equals("mode") ? j.getMode() : j.getTable();
      throw new InvalidConfigurationPropertyValueException(prefix + ".jdbc." + property, value, Redaction.redact(e.getMessage()));
    }
  }
}
