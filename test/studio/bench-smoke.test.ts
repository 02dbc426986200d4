/**
 * The studio bench's measurement on a real 100k-event run, asserted here with a generous bound
 * (the bench prints the exact numbers): state at a random seq answers in well under 50 ms (p95).
 */
import { describe, expect, it } from 'vitest';
import { benchmarks } from '../bench/studio.bench.js';

describe('studio bench', () => {
  it('answers state-at-seq on a 100k-event run fast', async () => {
    const results = Object.fromEntries((await benchmarks()).map((r) => [r.name, r.value]));
    expect(results['studio: events in synthetic run']).toBe(100_000);
    expect(results['studio: state-at-seq p95 (target < 50)']).toBeLessThan(50);
  });
});
