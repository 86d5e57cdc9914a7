package io.locksmith.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** {@code --key value} and {@code --flag} options plus positional arguments, checked against a known set. */
final class Args {
  private final Map<String, String> options = new HashMap<>();
  private final List<String> positional = new ArrayList<>();

  Args(String[] argv, int from, Set<String> valued, Set<String> flags) {
    for (int i = from; i < argv.length; i++) {
      String a = argv[i];
      if (a.startsWith("--")) {
        String key = a.substring(2);
        String value = null;
        int eq = key.indexOf('=');
        if (eq >= 0) {
          value = key.substring(eq + 1);
          key = key.substring(0, eq);
        }
        if (flags.contains(key) && value == null) {
          options.put(key, "true");
        } else if (valued.contains(key)) {
          if (value == null) {
            if (i + 1 >= argv.length) {
              throw new UsageException("--" + key + " needs a value");
            }
            value = argv[++i];
          }
          options.put(key, value);
        } else {
          throw new UsageException("unknown option --" + key);
        }
      } else {
        positional.add(a);
      }
    }
  }

  String get(String key, String fallback) {
    return options.getOrDefault(key, fallback);
  }

  boolean flag(String key) {
    return options.containsKey(key);
  }

  int intValue(String key, int fallback, int min, int max) {
    String v = options.get(key);
    if (v == null) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(v);
      if (n < min || n > max) {
        throw new UsageException("--" + key + " must be in " + min + ".." + max + ", was " + n);
      }
      return n;
    } catch (NumberFormatException e) {
      throw new UsageException("--" + key + " must be a whole number, was '" + v + "'");
    }
  }

  /** Parses {@code 250us}, {@code 500ms}, {@code 10s}, {@code 2m} or an ISO-8601 duration. */
  Duration duration(String key, Duration fallback) {
    String v = options.get(key);
    if (v == null) {
      return fallback;
    }
    try {
      Duration d;
      if (v.endsWith("us")) {
        d = Duration.ofNanos(Math.multiplyExact(Long.parseLong(v.substring(0, v.length() - 2)), 1000L));
      } else if (v.endsWith("ms")) {
        d = Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      } else if (v.endsWith("s")) {
        d = Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
      } else if (v.endsWith("m")) {
        d = Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
      } else {
        d = Duration.parse(v);
      }
      if (d.isNegative() || d.isZero()) {
        throw new UsageException("--" + key + " must be positive, was " + v);
      }
      return d;
    } catch (RuntimeException e) {
      if (e instanceof UsageException u) {
        throw u;
      }
      throw new UsageException("--" + key + " must be a duration like 250us, 500ms, 10s or 2m, was '" + v + "'");
    }
  }

  List<String> positional() {
    return positional;
  }

  /** Bad command-line input: printed with the usage, exit code 2. */
  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }
}
