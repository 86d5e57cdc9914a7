package io.locksmith.redis;

/** Reads the exclusive lock's stored value (lock-value.lua) in tests: "token|holds|run|flags|owner". */
final class LockValues {
  static final int TOKEN = 0;
  static final int HOLDS = 1;
  static final int RUN = 2;
  static final int FLAGS = 3;
  static final int OWNER = 4;

  private LockValues() {}

  /** @return field {@code index} of {@code value}, or null when the lock is free ({@code value} null) */
  static String field(String value, int index) {
    return value == null ? null : value.split("\\|", 5)[index];
  }
}
