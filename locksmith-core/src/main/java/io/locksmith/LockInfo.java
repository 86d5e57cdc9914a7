package io.locksmith;

import java.time.Duration;
import java.util.Objects;

/**
 * An operator's snapshot of one held lock, from {@link LockClient#inspect(String)}. Immutable; it
 * describes the moment it was read and may be stale by the time it is looked at.
 *
 * @param name the lock name (without namespace)
 * @param owner the backend's owner id of the holder: {@code <clientId>:<seq>}, or {@code
 *     <clientId>:<seq>@<clientName>} when the holder's client has a {@linkplain ClientOptions#clientName()
 *     name}
 * @param holdCount re-entry depth of the holder
 * @param fencingToken the token of the current grant
 * @param remainingTtl how long the server keeps the lock if it is not renewed, as the server sees it
 * @param waiters how many waiters the server knows of (0 where the backend does not track them)
 */
public record LockInfo(String name, String owner, int holdCount, long fencingToken,
    Duration remainingTtl, int waiters) {
  /** @throws NullPointerException if a reference component is null */
  public LockInfo {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(remainingTtl, "remainingTtl");
  }
}
