package io.locksmith.spi;

/** Whether an acquire attempt may create a hold or only deepen one the owner already has. */
public enum AcquireMode {
  /**
   * A fresh acquisition: grant if free (new fencing token). If this owner already holds the lock, that
   * hold is a leftover of an earlier attempt of the same acquisition (its give-back did not arrive):
   * grant it again with hold count 1 and its token, so that one release frees it.
   */
  NEW,
  /**
   * A re-entry: deepen the owner's hold; if the owner no longer owns the lock, report
   * {@link AcquireReply#lost()} and never grant a fresh hold with a different token.
   */
  REENTER
}
