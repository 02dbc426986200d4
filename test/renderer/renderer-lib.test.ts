/**
 * Small pure helpers of the renderer: reconnect backoff, protocol error normalisation, replay-diff
 * row alignment, NAME=VALUE parsing and duration formatting.
 */
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../renderer/src/lib/backoff.js';
import { ProtocolFailure, toProtocolFailure } from '../../renderer/src/lib/protocol-failure.js';
import { alignVerifyRows } from '../../renderer/src/lib/verify-rows.js';
import { parseKeyValues } from '../../renderer/src/lib/key-values.js';
import { formatDuration, formatRelative } from '../../renderer/src/lib/time-format.js';
import type { VerifyEntry } from '../../renderer/src/lib/protocol.js';

describe('backoffDelay', () => {
  it('doubles from the base and stops at the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((a) => backoffDelay(a))).toEqual([250, 500, 1000, 2000, 4000, 8000, 8000]);
    expect(backoffDelay(10_000)).toBe(8000);
    expect(() => backoffDelay(-1)).toThrow(/non-negative integer/);
  });
});

describe('toProtocolFailure', () => {
  it('keeps a server ProtocolError, unwraps {error}, and wraps anything else', () => {
    const f = toProtocolFailure({ code: 'not-found', message: 'no run "x"', retryable: false });
    expect(f).toBeInstanceOf(ProtocolFailure);
    expect([f.code, f.message, f.retryable]).toEqual(['not-found', 'no run "x"', false]);
    expect(toProtocolFailure({ error: { code: 'conflict', message: 'busy', retryable: true } }).code).toBe('conflict');
    const wrapped = toProtocolFailure(new TypeError('Failed to fetch'));
    expect([wrapped.code, wrapped.retryable]).toEqual(['E_BRIDGE', true]);
    expect(toProtocolFailure('boom', 'E_IPC').code).toBe('E_IPC');
  });
});

describe('alignVerifyRows', () => {
  const e = (seq: number, stepPath: string): VerifyEntry => ({ seq, stepPath, type: 'step.started', effectId: null });
  it('pairs entries by seq and marks the divergence and what the replay never re-derived', () => {
    const rows = alignVerifyRows({
      runId: 'r', ok: false,
      original: [e(1, 'A/0'), e(2, 'A/1'), e(3, 'A/2')],
      replayed: [e(1, 'A/0')],
      divergence: { index: 1, seq: 2, stepPath: 'A/1', recorded: 'A/1', asked: 'A/9', explanation: 'edited', cause: 'edit' },
      unchecked: [],
      runStatus: 'completed',
    });
    expect(rows.map((r) => r.state)).toEqual(['same', 'divergent', 'after-divergence']);
    expect(rows[1]!.replayed).toBeNull();
    expect(rows[2]!.replayed).toBeNull();
  });
  it('calls an entry before the divergence that the replay never reached not re-derived, not "after" it', () => {
    const rows = alignVerifyRows({
      runId: 'r', ok: false,
      original: [e(1, 'L/1[0]/0'), e(2, 'L/1[1]/0'), e(3, 'L/1[1]/1'), e(4, 'L/1[0]/1'), e(5, 'A/9')],
      replayed: [e(1, 'L/1[0]/0'), e(4, 'L/1[0]/1')],
      divergence: { index: 2, seq: 4, stepPath: 'L/1[0]/1', recorded: 'a POST', asked: 'another', explanation: 'edited', cause: 'edit' },
      unchecked: [],
      runStatus: 'completed',
    });
    expect(rows.map((r) => [r.original?.seq, r.state])).toEqual([[1, 'same'], [2, 'only-original'], [3, 'only-original'], [4, 'divergent'], [5, 'after-divergence']]);
  });
  it('in concurrent branches, where the replay asks in another order than the log, pairs each entry with its own', () => {
    // Iterations 0 and 1 interleaved in the log; the replay asked for iteration 1's first. Iteration 1's POST diverged.
    const original = [e(1, 'L/1[0]/0'), e(2, 'L/1[1]/0'), e(3, 'L/1[0]/1'), e(4, 'L/1[1]/1')];
    const rows = alignVerifyRows({
      runId: 'r', ok: false,
      original,
      replayed: [e(2, 'L/1[1]/0'), e(1, 'L/1[0]/0'), e(3, 'L/1[0]/1')],
      divergence: { index: 3, seq: 4, stepPath: 'L/1[1]/1', recorded: 'a POST', asked: 'another POST', explanation: 'edited', cause: 'edit' },
      unchecked: [],
      runStatus: 'completed',
    });
    expect(rows.map((r) => [r.original?.seq, r.replayed?.seq ?? null, r.state])).toEqual([
      [1, 1, 'same'],
      [2, 2, 'same'],
      [3, 3, 'same'],
      [4, null, 'divergent'],
    ]);
  });
  it('gives a divergence past the recorded entries a row of its own', () => {
    const rows = alignVerifyRows({
      runId: 'r', ok: false, original: [e(1, 'A/0')], replayed: [e(1, 'A/0')],
      divergence: { index: 1, seq: 0, stepPath: 'A/1', recorded: 'nothing', asked: 'A/1', explanation: 'edited', cause: 'edit' },
      unchecked: [], runStatus: 'completed',
    });
    expect(rows.map((r) => r.state)).toEqual(['same', 'divergent']);
  });
  it('flags rows present on one side only when nothing diverged', () => {
    const rows = alignVerifyRows({ runId: 'r', ok: true, original: [e(1, 'A/0'), e(2, 'A/1')], replayed: [e(1, 'A/0'), e(3, 'A/9')], divergence: null, unchecked: [], runStatus: 'completed' });
    expect(rows.map((r) => r.state)).toEqual(['same', 'only-original', 'only-replayed']);
  });
});

describe('parseKeyValues', () => {
  it('reads NAME=VALUE lines and names the bad line', () => {
    expect(parseKeyValues('Shop=http://127.0.0.1:4010\n\n TOKEN = a=b ', 'Env')).toEqual({ Shop: 'http://127.0.0.1:4010', TOKEN: 'a=b' });
    expect(() => parseKeyValues('ok=1\nnope', 'Sources')).toThrow('Sources line 2: expected NAME=VALUE but found "nope"');
  });
});

describe('formatDuration', () => {
  it('is short at every scale', () => {
    expect(formatDuration(812)).toBe('812 ms');
    expect(formatDuration(4200)).toBe('4.20 s');
    expect(formatDuration(185_000)).toBe('3 m 05 s');
    expect(formatDuration(2 * 86_400_000 + 4 * 3_600_000)).toBe('2 d 4 h');
    expect(formatDuration(Number.NaN)).toBe('—');
    expect(formatRelative(10_000, 0)).toBe('in 10.0 s');
    expect(formatRelative(0, 500)).toBe('now');
  });
});
