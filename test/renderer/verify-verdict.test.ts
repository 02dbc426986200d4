/**
 * The Replay diff's verdict chip. "Verify replay" on a run that has logged no step yet (killed
 * right after run.started, or opened while starting) compared 0 entries and said "✓ replay
 * matches so far (0 entries)": a ✓ for a check that compared nothing. It now says there was
 * nothing to compare, in the partial colour; a ✓ needs at least one entry re-derived.
 */
import { describe, expect, it } from 'vitest';
import type { VerifyReport } from '../../renderer/src/lib/protocol.js';
import { fullyVerified } from '../../renderer/src/lib/protocol.js';
import { verifyVerdict } from '../../renderer/src/lib/verify-rows.js';

const entry = (seq: number) => ({ seq, stepPath: 'A/0', type: 'step.started', effectId: null });
const report = (over: Partial<VerifyReport>): VerifyReport =>
  ({ runId: 'r', ok: true, original: [], replayed: [], divergence: null, unchecked: [], runStatus: 'completed', ...over }) as VerifyReport;

describe('the replay verdict', () => {
  it('is no ✓ when nothing was compared', () => {
    const v = verifyVerdict(report({ runStatus: 'running' }));
    expect(v.kind).toBe('partial');
    expect(v.text).not.toContain('✓');
    expect(v.text).toMatch(/nothing to compare/);
  });

  it('is ✓ for entries all re-derived, "so far" for an unfinished run', () => {
    expect(verifyVerdict(report({ original: [entry(2)], replayed: [entry(2)] }))).toEqual({ kind: 'ok', text: '✓ replay matches (1 entries)' });
    // A run that has not finished: no ✓ for what it has yet to do.
    expect(verifyVerdict(report({ original: [entry(2)], replayed: [entry(2)], runStatus: 'suspended' }))).toEqual({ kind: 'partial', text: '◐ no divergence so far (1 entries): the run has not finished' });
  });

  it('fullyVerified, the one rule of every ✓, holds no unfinished run (the crash lab took it alone)', () => {
    const whole = { original: [entry(2)], replayed: [entry(2)] };
    expect(fullyVerified(report(whole))).toBe(true);
    expect(fullyVerified(report({ ...whole, runStatus: 'failed' }))).toBe(true);
    expect(fullyVerified(report({ ...whole, runStatus: 'running' }))).toBe(false);
    expect(fullyVerified(report({ ...whole, runStatus: 'suspended' }))).toBe(false);
  });

  it('is partial when some were not re-derived, and ✕ at a divergence', () => {
    expect(verifyVerdict(report({ original: [entry(2), entry(3)], replayed: [entry(2)] })).kind).toBe('partial');
    // Named by the seq its row shows, not by how many entries the replay had matched (15 against row #41).
    const bad = verifyVerdict(report({ ok: false, original: [entry(2)], replayed: [entry(2)], divergence: { index: 0, seq: 41, cause: 'edit' } as VerifyReport['divergence'] }));
    expect(bad).toEqual({ kind: 'bad', text: '✕ the edit diverges at #41' });
    const past = verifyVerdict(report({ ok: false, original: [entry(2)], replayed: [entry(2)], divergence: { index: 1, seq: 0, cause: 'nondeterminism' } as VerifyReport['divergence'] }));
    expect(past.text).toBe('✕ diverges past the end of the log');
  });
});

describe('the status badge', () => {
  it('shows no ✓ beside a completed run’s failures, compact or not', async () => {
    const { badgeText } = await import('../../renderer/src/lib/run-status.js');
    expect(badgeText('completed', 5, true)).toBe('⚠ 5 failures');
    expect(badgeText('completed', 1, false)).toBe('completed with 1 failure');
    expect(badgeText('completed', 0, true)).toBe('completed');
  });
});
