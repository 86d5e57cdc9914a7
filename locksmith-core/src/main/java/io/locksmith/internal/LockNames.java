package io.locksmith.internal;

import java.util.Objects;

/** Lock name validation, in one place for every backend. */
public final class LockNames {
  private LockNames() {}

  /**
   * @param name a lock name
   * @param maxLength the longest accepted
   * @return the name
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if it is blank, longer than {@code maxLength}, or contains a
   *     control character
   */
  public static String validate(String name, int maxLength) {
    Objects.requireNonNull(name, "lock name must not be null");
    if (name.isBlank()) {
      throw new IllegalArgumentException("lock name must not be blank");
    }
    if (name.length() > maxLength) {
      throw new IllegalArgumentException(
          "lock name is " + name.length() + " characters, more than the limit of " + maxLength);
    }
    for (int i = 0; i < name.length(); i++) {
      if (Character.isISOControl(name.charAt(i))) {
        throw new IllegalArgumentException("lock name must not contain control characters");
      }
    }
    return name;
  }
}
