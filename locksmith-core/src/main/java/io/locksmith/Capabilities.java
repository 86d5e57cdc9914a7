package io.locksmith;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * What a {@link LockClient}'s backend offers, so that callers can decide before they depend on it
 * rather than discovering an {@link UnsupportedOperationException}. Immutable and thread-safe.
 */
public final class Capabilities {
  private final String backend;
  private final Set<LockKind> lockKinds;
  private final FencingGuarantee fencing;
  private final boolean waitsByNotification;

  /**
   * @param backend short backend name, e.g. {@code "redis"}
   * @param lockKinds the lock kinds offered (at least {@link LockKind#EXCLUSIVE})
   * @param fencing how strongly fencing tokens increase
   * @param waitsByNotification whether waiters are woken by the server rather than by polling
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code lockKinds} lacks {@link LockKind#EXCLUSIVE}
   */
  public Capabilities(String backend, Set<LockKind> lockKinds, FencingGuarantee fencing,
      boolean waitsByNotification) {
    this.backend = Objects.requireNonNull(backend, "backend");
    if (!lockKinds.contains(LockKind.EXCLUSIVE)) {
      throw new IllegalArgumentException("every backend offers the EXCLUSIVE lock kind");
    }
    this.lockKinds = Set.copyOf(EnumSet.copyOf(lockKinds));
    this.fencing = Objects.requireNonNull(fencing, "fencing");
    this.waitsByNotification = waitsByNotification;
  }

  /** @return short backend name, e.g. {@code "redis"} or {@code "in-jvm"} */
  public String backend() {
    return backend;
  }

  /** @return the lock kinds this backend offers */
  public Set<LockKind> lockKinds() {
    return lockKinds;
  }

  /**
   * @param kind a lock kind
   * @return whether this backend offers it
   */
  public boolean supports(LockKind kind) {
    return lockKinds.contains(kind);
  }

  /** @return how strongly fencing tokens increase */
  public FencingGuarantee fencing() {
    return fencing;
  }

  /** @return whether waiters are woken by the server (pub/sub, watches) rather than by polling */
  public boolean waitsByNotification() {
    return waitsByNotification;
  }

  @Override
  public String toString() {
    return backend + lockKinds + " fencing=" + fencing + " notify=" + waitsByNotification;
  }
}
