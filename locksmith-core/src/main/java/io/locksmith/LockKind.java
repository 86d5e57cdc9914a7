package io.locksmith;

/** The kinds of lock a backend may offer; see {@link Capabilities#lockKinds()}. */
public enum LockKind {
  /** Exclusive, re-entrant lock: {@link LockClient#lock(String)}. */
  EXCLUSIVE,
  /** Exclusive lock granted in arrival order. */
  FAIR,
  /** Shared readers or one writer. */
  READ_WRITE,
  /** A number of permits. */
  SEMAPHORE
}
