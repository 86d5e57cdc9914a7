/**
 * Recipes built on the lock API and any {@link io.locksmith.LockClient}: {@link
 * io.locksmith.recipes.SegmentedStock}, hot inventory split into segments that are locked and fenced
 * one by one, over a {@link io.locksmith.recipes.StockStore} (in memory here; Redis in {@code
 * locksmith-redis}). Public API. See {@code docs/recipes.md}.
 */
package io.locksmith.recipes;
