package io.locksmith;

/**
 * Ownership of a lock is known to be gone (its validity elapsed without renewal, or the backend says
 * another owner or nobody holds it), or may be gone and can no longer be confirmed. Any work done
 * under the lock since it was lost was not protected by it: this is where a fencing token earns its
 * keep.
 */
public class LeaseLostException extends LockException {
  private static final long serialVersionUID = 1L;
  private final String lockName;

  /**
   * @param lockName the lock whose lease is gone
   * @param message details
   */
  public LeaseLostException(String lockName, String message) {
    super("lease on lock '" + lockName + "' is lost: " + message);
    this.lockName = lockName;
  }

  /** @return the lock whose lease is gone */
  public String lockName() {
    return lockName;
  }
}
