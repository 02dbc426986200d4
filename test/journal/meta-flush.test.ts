/**
 * A resume's `run.resumed` marker is buffered with the walk's events: the interval flush never
 * commits it alone, so a replay that takes long to reach a divergence still appends nothing.
 */
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../engine/env/fake-env.js';
import { Journal } from '../../engine/journal/journal.js';
import type { NewEvent, StoredEvent } from '../../engine/log/events.js';
import type { EventLog, Lease } from '../../engine/log/log.js';

const recorded = [
  { runId: 'r', seq: 1, type: 'step.started', stepPath: 'A/0', payload: { stepType: 'Let', line: 1 }, recordedAt: 0 },
  { runId: 'r', seq: 2, type: 'step.completed', stepPath: 'A/0', payload: { stepType: 'Let' }, recordedAt: 0 },
] as StoredEvent[];
const marker = { type: 'run.resumed', stepPath: '', payload: { reason: 'crash', owner: 'o', replayFromSeq: 2 }, recordedAt: 0 } as NewEvent;

function journalWithLog() {
  const commit = vi.fn(async () => []);
  const log = { commit } as unknown as EventLog;
  const lease: Lease = { runId: 'r', owner: 'o', epoch: 1, expiresAt: Number.MAX_SAFE_INTEGER };
  const clock = new FakeClock(0);
  const journal = new Journal(log, lease, 'r', recorded, clock, { flushIntervalMs: 50 });
  journal.pendingMeta(marker);
  return { journal, clock, commit };
}

describe('the resume marker and the interval flush', () => {
  it('is not committed alone, however long the replay takes', async () => {
    const { journal, clock, commit } = journalWithLog();
    await clock.advance(1000);
    expect(journal.take('A/0', 'step.started')).toBeDefined();
    await journal.maybeFlush();
    expect(commit).not.toHaveBeenCalled();
  });

  it('goes with the first live events once they are due', async () => {
    const { journal, clock, commit } = journalWithLog();
    expect(journal.take('A/0', 'step.started')).toBeDefined();
    expect(journal.take('A/0', 'step.completed')).toBeDefined();
    journal.emit('step.started', 'A/1', { stepType: 'Let', line: 2 });
    await clock.advance(60);
    await journal.maybeFlush();
    expect(commit).toHaveBeenCalledTimes(1);
    const entries = (commit.mock.calls[0] as unknown as [Lease, { event: NewEvent }[]])[1];
    expect(entries.map((e) => e.event.type)).toEqual(['run.resumed', 'step.started']);
    // Committed: the next interval starts afresh, with nothing pending.
    await clock.advance(60);
    await journal.maybeFlush();
    expect(commit).toHaveBeenCalledTimes(1);
  });
});
