/**
 * A timeline bar's duration. A step that has not finished (a pause the run still waits on, a
 * step the run was killed in) has a bar that ends at its last logged event; its label said
 * "Pause 15 ms" on a run that had waited an hour, as if the pause had taken 15 ms. A bar that
 * has not finished says "≥ 15 ms": at least that long, still open.
 */
import { describe, expect, it } from 'vitest';
import { barDuration } from '../../renderer/src/lib/time-format.js';

describe('barDuration', () => {
  it('is the measured time for a finished step, a lower bound for one still open', () => {
    expect(barDuration({ startAt: 1000, endAt: 1015, status: 'completed' })).toBe('15 ms');
    expect(barDuration({ startAt: 1000, endAt: 3500, status: 'failed' })).toBe('2.50 s');
    expect(barDuration({ startAt: 1000, endAt: 1015, status: 'running' })).toBe('≥ 15 ms');
  });
});
