/**
 * The journal's state machine (engine/journal/journal.ts header): replaying while recorded events
 * remain, live once the log ran out, closed once the run ended — and closed refuses everything.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../engine/env/fake-env.js';
import { Journal } from '../../engine/journal/journal.js';
import type { StoredEvent } from '../../engine/log/events.js';

const recorded: StoredEvent[] = [
  { runId: 'r', seq: 1, type: 'run.started', stepPath: '', payload: { mission: 'M', missionHash: 'h', format: 2 }, recordedAt: 0 },
  { runId: 'r', seq: 2, type: 'step.started', stepPath: 'A/0', payload: { stepType: 'Let', line: 3 }, recordedAt: 0 },
];

describe('journal state', () => {
  it('replaying → live → closed, and closed refuses emit, buffer and commit', async () => {
    const journal = new Journal(null, null, 'r', recorded, new FakeClock(0));
    expect(journal.state).toBe('replaying');
    expect(journal.take('A/0', 'step.started')?.seq).toBe(2);
    expect(journal.state).toBe('live');
    journal.emit('step.completed', 'A/0', { stepType: 'Let' });
    journal.close();
    expect(journal.state).toBe('closed');
    expect(() => journal.emit('step.started', 'A/1', { stepType: 'Let', line: 4 })).toThrow(/has ended; its journal refuses a step.started event at A\/1/);
    expect(() => journal.buffer([])).toThrow(/refuses store writes/);
    await expect(journal.commit({ durable: true })).rejects.toThrow(/refuses a commit/);
  });

  it('hands a recorded input back as the log will hold it, so live and replay act on one value', () => {
    const journal = new Journal(null, null, 'r', recorded.slice(0, 1), new FakeClock(0));
    const when = new Date('2026-01-02T03:04:05.000Z');
    const value = journal.record('A/0', 'value.recorded', () => ({ source: 'random', value: { at: when, zero: -0, gone: undefined } })).value;
    expect(value).toEqual({ at: '2026-01-02T03:04:05.000Z', zero: 0 });
    expect(Object.is((value as { zero: number }).zero, 0)).toBe(true);
    expect(() => journal.record('A/1', 'value.recorded', () => ({ source: 'random', value: [1, Infinity] }))).toThrow(/holds Infinity at \$\.value\[1\]/);
  });
});
