package io.locksmith.spi;

/** Whether an acquire attempt may create a hold or only deepen one the owner already has. */
public enum AcquireMode {
  /** A fresh acquisition: grant if free (new fencing token) or if already owned (re-entry). */
  NEW,
  /**
   * A re-entry: deepen the owner's hold; if the owner no longer owns the lock, report
   * {@link AcquireReply#lost()} and never grant a fresh hold with a different token.
   */
  REENTER
}
