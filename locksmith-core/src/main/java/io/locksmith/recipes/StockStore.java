package io.locksmith.recipes;

import io.locksmith.NoFencingTokenException;
import io.locksmith.StaleTokenException;
import java.util.List;

/**
 * Where a {@link SegmentedStock} keeps its segments: per item, a fixed number of segments, each with its
 * units and a <em>fence</em> (the largest fencing token admitted for it). This is the resource side of
 * fencing ({@code docs/fencing.md}): {@link #read} admits the caller's token at the first access, {@link
 * #write} checks it again and writes atomically, so a holder paused past its lease can neither write
 * over a later holder's sale nor have its own update lost.
 *
 * <p><b>Contract.</b> Tokens are those of the segment locks' leases: 1 or more. A token below 1 (a
 * degraded lease's {@link io.locksmith.Lease#NO_FENCING_TOKEN}) is refused with {@link
 * NoFencingTokenException} before anything is read or changed. A token is <em>stale</em> for a segment
 * if it is smaller than that segment's fence; an equal or larger one is admitted and becomes the fence.
 *
 * <p><b>A SQL store</b> maps this onto one row per segment, {@code (item, segment, units, fence)}:
 * <ul>
 *   <li>{@code create}: {@code INSERT … ON CONFLICT DO NOTHING} of rows {@code 0..n-1} with zeros, then
 *       {@code SELECT count(*)};
 *   <li>{@code read}: {@code UPDATE … SET fence = :t WHERE item = :i AND segment = :s AND fence <= :t
 *       RETURNING units} (or the {@code UPDATE} and a {@code SELECT} in one transaction); no row means
 *       stale;
 *   <li>{@code write}: in one transaction, {@code UPDATE … SET units = :u, fence = :t WHERE item = :i AND
 *       segment = :s AND fence <= :t} per segment; any update count of 0 rolls the whole transaction
 *       back and is reported as stale;
 *   <li>{@code units}: {@code SELECT units … ORDER BY segment}.
 * </ul>
 *
 * <p>Implementations must be thread-safe; every method may be called by many threads and processes at
 * once. Failures of the store itself (connection lost, timeout) are thrown unchanged as unchecked
 * exceptions; a write that timed out may have been applied.
 */
public interface StockStore {

  /**
   * Creates the item's segments with 0 units and fence 0, unless the item exists already.
   *
   * @param item the item
   * @param segments how many segments to create, at least 1
   * @return the number of segments the item has now: {@code segments}, or what was stored before
   */
  int create(String item, int segments);

  /**
   * The first access of a segment under its lock: admits {@code token} (raises the segment's fence to
   * it) and reads the units, atomically.
   *
   * @param item the item
   * @param segment the segment, from 0
   * @param token the segment lock's fencing token
   * @return the segment's units
   * @throws StaleTokenException if a larger token has been admitted for the segment; nothing changed
   * @throws NoFencingTokenException if {@code token} is below 1; nothing was read or changed
   * @throws IllegalArgumentException if the item or the segment does not exist
   */
  long read(String item, int segment, long token);

  /**
   * Writes new unit counts to one or more segments of one item, all or none: each write's token is
   * checked against its segment's fence, and only if none is stale are they all applied (each segment's
   * fence then becomes its write's token, if larger).
   *
   * @param item the item
   * @param writes one per segment, no segment twice
   * @throws StaleTokenException for the first stale write found; nothing was written
   * @throws NoFencingTokenException if a token is below 1; nothing was written
   * @throws IllegalArgumentException if the item or a segment does not exist, a segment is given twice,
   *     or a unit count is negative
   */
  void write(String item, List<SegmentWrite> writes);

  /**
   * Reads every segment's units without a token: a snapshot for totals and monitoring, not for a
   * decision under a lock (that is what {@link #read} is for).
   *
   * @param item the item
   * @return the units per segment, index = segment; empty if the item does not exist
   */
  long[] units(String item);

  /**
   * One segment's new unit count, written with the token of that segment's lock.
   *
   * @param segment the segment, from 0
   * @param token the segment lock's fencing token
   * @param units the new unit count, not negative
   */
  record SegmentWrite(int segment, long token, long units) {}
}
