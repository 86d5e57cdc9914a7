package io.locksmith.spring;

import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Fails the start-up on a {@code locksmith.*} property that no setting has: a misspelt
 * {@code locksmith.redis.url} would otherwise start the application with no lock client at all. The
 * failure names each unknown property and the nearest valid one, never its value (which may hold a
 * password). Unknown names in JVM system properties and environment variables are logged at WARN instead:
 * those sources are shared with the JVM, the build and the platform (Locksmith's own test kit reads
 * {@code -Dlocksmith.testkit.*}), so a name there may belong to someone else. Stateless; used once at
 * start-up.
 */
final class LocksmithPropertiesCheck {

  private LocksmithPropertiesCheck() {}

  /**
   * Checks the environment.
   *
   * @return a marker bean, so the clients can depend on the check
   * @throws IllegalStateException naming every unknown {@code locksmith.*} property
   */
  static LocksmithPropertiesCheck check(Environment environment) {
    List<String> fromSystem = unknown(environment, true);
    // Locksmith's own test kit and build set these as system properties; they are not settings
    fromSystem.removeIf(name -> name.startsWith("locksmith.testkit.") || name.startsWith("locksmith.test."));
    if (!fromSystem.isEmpty()) {
      org.slf4j.LoggerFactory.getLogger(LocksmithPropertiesCheck.class).warn(
          "system properties or environment variables set {}, which Locksmith does not know; ignored", fromSystem);
    }
    List<String> unknown = unknown(environment, false);
    if (!unknown.isEmpty()) {
      throw new IllegalStateException(message(unknown));
    }
    return new LocksmithPropertiesCheck();
  }

  private static boolean isSystem(ConfigurationPropertySource source) {
    Object underlying = source.getUnderlyingSource();
    String name = underlying instanceof PropertySource<?> p ? p.getName() : "";
    return StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME.equals(name)
        || StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME.equals(name);
  }

  /** The unknown names in the system sources, or in all the others. */
  private static List<String> unknown(Environment environment, boolean system) {
    List<String> unknown = new ArrayList<>();
    try {
      Binder.get(environment).bind("locksmith", Bindable.ofInstance(new LocksmithProperties()),
          new NoUnboundElementsBindHandler(BindHandler.DEFAULT, source -> isSystem(source) == system));
    } catch (BindException e) {
      if (e.getCause() instanceof UnboundConfigurationPropertiesException u) {
        u.getUnboundProperties().forEach(p -> unknown.add(p.getName().toString()));
      }
      // otherwise a value that does not convert: the regular binding reports it, naming the property
    }
    return unknown;
  }

  private static String message(List<String> unknown) {
    StringBuilder m = new StringBuilder("Unknown Locksmith propert").append(unknown.size() == 1 ? "y" : "ies")
        .append(" (a misspelt name leaves its setting at the default, or the application without a lock client):");
    for (String name : new TreeSet<>(unknown)) {
      m.append("\n  ").append(name);
      String nearest = nearest(name);
      if (nearest != null) {
        m.append(" (did you mean ").append(nearest).append("?)");
      }
    }
    return m.toString();
  }

  /** The valid property nearest to the name, or null when none is close. */
  static String nearest(String name) {
    String prefix = "locksmith.";
    List<String> valid = new ArrayList<>();
    if (name.startsWith("locksmith.clients.") && name.indexOf('.', "locksmith.clients.".length()) > 0) {
      prefix = name.substring(0, name.indexOf('.', "locksmith.clients.".length()) + 1);
      names("", LockClientProperties.class, valid);
    } else {
      names("", LocksmithProperties.class, valid);
    }
    String rest = name.substring(prefix.length());
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String v : valid) {
      int d = distance(rest, v);
      if (d < bestDistance) {
        bestDistance = d;
        best = v;
      }
    }
    return best != null && bestDistance <= Math.max(2, rest.length() / 4) ? prefix + best : null;
  }

  /** The kebab-case property names of a properties class, nested groups included. */
  private static void names(String prefix, Class<?> type, List<String> out) {
    for (PropertyDescriptor d : BeanUtils.getPropertyDescriptors(type)) {
      if (d.getReadMethod() == null || "class".equals(d.getName()) || Map.class.isAssignableFrom(d.getPropertyType())) {
        continue;
      }
      String name = prefix + kebab(d.getName());
      Class<?> t = d.getPropertyType();
      if (t.getName().startsWith("io.locksmith.spring.") && !t.isEnum()) {
        names(name + ".", t, out);
      } else {
        out.add(name);
      }
    }
  }

  private static String kebab(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
  }

  /** Levenshtein distance. */
  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
