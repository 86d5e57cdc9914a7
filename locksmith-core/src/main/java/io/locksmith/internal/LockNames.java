package io.locksmith.internal;

import java.util.Objects;

/** Lock name validation, in one place for every backend. */
public final class LockNames {
  private LockNames() {}

  /**
   * Checks a lock name. Its length is counted in Unicode code points, so a character outside the Basic
   * Multilingual Plane (two UTF-16 chars) counts once.
   *
   * @param name a lock name
   * @param maxLength the most code points accepted
   * @return the name
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if it is blank, longer than {@code maxLength} code points, or
   *     contains a control character or an unpaired UTF-16 surrogate
   */
  public static String validate(String name, int maxLength) {
    Objects.requireNonNull(name, "lock name must not be null");
    if (name.isBlank()) {
      throw new IllegalArgumentException("lock name must not be blank");
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (Character.isISOControl(c)) {
        throw new IllegalArgumentException("lock name must not contain control characters");
      }
      if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
          i++; // a pair: one supplementary character
          continue;
        }
        // It has no UTF-8 form: a backend that encodes names (Redis keys) would replace it, and so make
        // several names one lock.
        throw new IllegalArgumentException(String.format("lock name must not contain an unpaired UTF-16 "
            + "surrogate (\\u%04X at index %d): it is not a character and has no UTF-8 form", (int) c, i));
      }
    }
    int length = name.codePointCount(0, name.length());
    if (length > maxLength) {
      throw new IllegalArgumentException(
          "lock name is " + length + " code points long, more than the limit of " + maxLength);
    }
    return name;
  }
}
