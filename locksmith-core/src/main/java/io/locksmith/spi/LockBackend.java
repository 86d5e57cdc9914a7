package io.locksmith.spi;

import io.locksmith.Capabilities;
import io.locksmith.LockKind;

/**
 * A lock backend: its connections, what it offers, and the primitive operations of each lock kind it
 * offers. The backend itself is the {@link LockOps} of the exclusive lock; {@link #ops(Primitive)} and
 * {@link #semaphoreOps(int)} give the operations of the other kinds over the same connections.
 * Implementations are thread-safe.
 */
public interface LockBackend extends LockOps, AutoCloseable {

  /**
   * Called once, before any other method, with what the backend needs from its client.
   *
   * @param context the client's id, namespace and wake-up sink
   * @throws io.locksmith.BackendUnavailableException if the backend cannot be set up
   */
  void open(BackendContext context);

  /** @return what this backend offers */
  Capabilities capabilities();

  /**
   * The operations of one side of a lock kind. Called by the core only for kinds listed in
   * {@link #capabilities()}; the result shares this backend's connections and lifecycle.
   *
   * @param primitive which lock primitive
   * @return its operations; {@code this} for {@link Primitive#EXCLUSIVE}
   * @throws UnsupportedOperationException if this backend does not offer it
   */
  default LockOps ops(Primitive primitive) {
    if (primitive == Primitive.EXCLUSIVE) {
      return this;
    }
    throw new UnsupportedOperationException(capabilities().backend() + " does not offer " + primitive
        + " locks");
  }

  /**
   * The operations of a semaphore. Each grant is one permit held by one owner under its own lease.
   *
   * @param declaredPermits the permit count a semaphore starts with when none is stored for its name
   * @return the operations
   * @throws UnsupportedOperationException if this backend does not offer {@link LockKind#SEMAPHORE}
   */
  default SemaphoreOps semaphoreOps(int declaredPermits) {
    throw new UnsupportedOperationException(capabilities().backend() + " does not offer semaphores");
  }

  /** Releases the backend's connections and threads; idempotent, never throws. */
  @Override
  void close();
}
