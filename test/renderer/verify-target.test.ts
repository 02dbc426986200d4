/**
 * The Replay diff's target and verdict chip. "Verify against edited mission" with an empty or
 * blank box verified the recorded mission and said "✓ replay matches"; a verdict also stayed
 * beside text edited after it (or while it was in flight). Now an empty edit is refused, the
 * verdict names the mission it checked, and a verdict for other text than the box's is stale.
 */
import { describe, expect, it } from 'vitest';
import type { VerifyReport } from '../../renderer/src/lib/protocol.js';
import { verdictView, verifyRequest, verifyTarget, type VerifyTarget } from '../../renderer/src/lib/verify-target.js';

const entry = (seq: number) => ({ seq, stepPath: 'A/0', type: 'step.started', effectId: null });
const matches = { runId: 'r', ok: true, original: [entry(2)], replayed: [entry(2)], divergence: null, unchecked: [], runStatus: 'completed' } as unknown as VerifyReport;
const PATH = '/m/mission.vague';
const edited = (text: string): VerifyTarget => ({ mission: 'edited', files: { [PATH]: text } });
const box = (text: string) => ({ [PATH]: text });

describe('what a replay verify checks', () => {
  it('refuses an empty or blank edited mission instead of verifying the recorded one', () => {
    for (const text of ['', '   \n', '\t']) {
      const t = verifyTarget(true, box(text));
      expect('refused' in t && t.refused).toMatch(/edited mission is empty/);
    }
    expect(verifyTarget(false, {})).toEqual({ target: { mission: 'recorded' } });
    expect(verifyTarget(true, box('mission M {}'))).toEqual({ target: edited('mission M {}') });
    // A folder mission: any blank file refuses the edit, naming it; every file edited goes with it.
    const folder = { [PATH]: 'mission M {}', '/m/pull.vague': ' ' };
    expect(verifyTarget(true, folder)).toEqual({ refused: expect.stringContaining('The edited mission is empty (/m/pull.vague)') });
    expect(verifyTarget(true, { ...folder, '/m/pull.vague': 'action P {}' })).toEqual({ target: { mission: 'edited', files: { ...folder, '/m/pull.vague': 'action P {}' } } });
  });

  it('sends the edit whenever it verifies an edit, and no text for the recorded mission', () => {
    expect(verifyRequest('r', edited('mission M {}'))).toEqual({ runId: 'r', files: { [PATH]: 'mission M {}' } });
    expect(verifyRequest('r', { mission: 'recorded' })).toEqual({ runId: 'r' });
  });
});

describe('the verdict chip', () => {
  it('names the mission it checked', () => {
    expect(verdictView(matches, { mission: 'recorded' }, false, {})).toEqual({ kind: 'ok', text: '✓ replay matches (1 entries) · against the recorded mission', stale: null });
    expect(verdictView(matches, edited('A'), true, box('A')).text).toBe('✓ replay matches (1 entries) · against the edited mission');
  });

  it('is out of date, never ✓-coloured, once the text changed (an answer landing for older text included)', () => {
    const v = verdictView(matches, edited('A'), true, box('A changed'));
    expect(v.kind).toBe('stale');
    expect(v.stale).toBe('the text changed since this verdict');
    expect(v.text).toContain('the text changed since this verdict');
    expect(verdictView(matches, edited('A'), true, box('  ')).kind).toBe('stale');
  });

  it('is out of date when the choice of mission changed', () => {
    expect(verdictView(matches, edited('A'), false, box('A')).stale).toBe('out of date: it checked the edited mission');
    expect(verdictView(matches, { mission: 'recorded' }, true, box('A')).stale).toBe('out of date: it checked the recorded mission');
  });
});
