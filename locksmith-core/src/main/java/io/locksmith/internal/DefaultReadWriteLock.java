package io.locksmith.internal;

import io.locksmith.DistributedLock;
import io.locksmith.DistributedReadWriteLock;
import io.locksmith.Lease;
import io.locksmith.LockException;
import io.locksmith.LockOptions;
import io.locksmith.spi.Primitive;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The two sides of one named read-write lock; see {@link DistributedReadWriteLock}. */
final class DefaultReadWriteLock implements DistributedReadWriteLock {
  private static final Logger log = LoggerFactory.getLogger(DefaultReadWriteLock.class);

  private final DefaultLockClient client;
  private final String name;
  private final LockOptions options;
  private final DefaultDistributedLock read;
  private final DefaultDistributedLock write;

  DefaultReadWriteLock(DefaultLockClient client, String name, LockOptions options,
      io.locksmith.spi.LockBackend backend) {
    this.client = client;
    this.name = name;
    this.options = options;
    this.read = new DefaultDistributedLock(client, backend.ops(Primitive.READ), Primitive.READ, name, options);
    this.write = new DefaultDistributedLock(client, backend.ops(Primitive.WRITE), Primitive.WRITE, name, options);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public LockOptions options() {
    return options;
  }

  @Override
  public DistributedLock readLock() {
    return read;
  }

  @Override
  public DistributedLock writeLock() {
    return write;
  }

  @Override
  public Lease downgrade(Lease writeLease) {
    Objects.requireNonNull(writeLease, "writeLease");
    DefaultLease w = LeaseHandle.unwrap(writeLease); // what acquire() hands out wraps the lease
    if (w == null || w.ops != write.ops || !w.lockName().equals(name)) {
      throw new IllegalArgumentException(writeLease + " is not a write lease of read-write lock '" + name
          + "' from this client");
    }
    Throwable site = client.acquisitionSite();
    // the read hold is taken first, as the write lease's owner, so that no writer slips in between
    DefaultLease readLease = read.downgradeFrom(w, null);
    try {
      writeLease.release(); // through the caller's object: the leak detector learns it ended properly
    } catch (LockException e) {
      // the read lease is ours either way; an unreleased write hold expires on the server by itself
      log.warn("downgrade of '{}': the write hold could not be released ({}); it expires within its lease",
          name, e.toString());
    }
    return client.publish(readLease, site);
  }

  @Override
  public String toString() {
    return "DistributedReadWriteLock[" + name + ", " + options + "]";
  }
}
