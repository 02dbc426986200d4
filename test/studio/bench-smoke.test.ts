/**
 * The studio bench module runs on a real 100k-event run and reports its figures (the numbers are
 * for `npm run bench` to print; timing is never asserted in tests — shared machines are noisy).
 */
import { describe, expect, it } from 'vitest';
import { benchmarks } from '../bench/studio.bench.js';

describe('studio bench', () => {
  it('measures state-at-seq on a 100k-event run and reports finite figures', async () => {
    const results = Object.fromEntries((await benchmarks()).map((r) => [r.name, r.value]));
    expect(results['studio: events in synthetic run']).toBe(100_000);
    const p95 = results['studio: state-at-seq p95 (target < 50)'];
    expect(Number.isFinite(p95)).toBe(true);
    expect(p95).toBeGreaterThan(0);
  });
});
