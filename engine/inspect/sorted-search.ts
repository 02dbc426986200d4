/**
 * Binary searches over ascending arrays, for the inspector's indexes (fold snapshots, store
 * histories, timeline lanes). Pure and import-free: the renderer's timeline shares it
 * (timeline-geometry.ts).
 */

/** First index whose key is >= target, in an array sorted by key. */
export function lowerBound<T>(items: readonly T[], target: number, key: (item: T) => number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(items[mid]!) < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the last value <= `target` in an ascending array, or -1. */
export function lastAtOrBelow(sorted: readonly number[], target: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= target) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
