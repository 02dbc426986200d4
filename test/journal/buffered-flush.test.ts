/**
 * GUARANTEES 5: buffered events ride on the run's next commit, made at the first step boundary
 * (`maybeFlush`) after 512 events or 50 ms — the Journal's defaults, tested here as they are.
 */
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../engine/env/fake-env.js';
import { Journal } from '../../engine/journal/journal.js';
import type { NewEvent } from '../../engine/log/events.js';
import type { EventLog, Lease } from '../../engine/log/log.js';

function liveJournal() {
  const commit = vi.fn(async () => []);
  const log = { commit } as unknown as EventLog;
  const lease: Lease = { runId: 'r', owner: 'o', epoch: 1, expiresAt: Number.MAX_SAFE_INTEGER };
  const clock = new FakeClock(0);
  // No options: the defaults are what is tested.
  const journal = new Journal(log, lease, 'r', [], clock);
  const emit = (n: number, from = 0) => {
    for (let i = from; i < from + n; i++) journal.emit('step.started', `A/${i}`, { stepType: 'Let', line: 1 });
  };
  const committed = () => commit.mock.calls.map((call) => (call as unknown as [Lease, { event: NewEvent }[], { durable: boolean }]));
  return { journal, clock, emit, commit, committed };
}

describe('the buffered commit of pure steps (defaults)', () => {
  it('is made at the step boundary that finds 512 events buffered, not before, and waits for no disk', async () => {
    const { journal, emit, commit, committed } = liveJournal();
    emit(511);
    await journal.maybeFlush();
    expect(commit).not.toHaveBeenCalled();
    emit(1, 511);
    await journal.maybeFlush();
    expect(commit).toHaveBeenCalledTimes(1);
    const [[, entries, options]] = committed() as [[Lease, { event: NewEvent }[], { durable: boolean }]];
    expect(entries).toHaveLength(512);
    expect(options.durable).toBe(false);
    // Nothing left over: the next boundary commits nothing.
    await journal.maybeFlush();
    expect(commit).toHaveBeenCalledTimes(1);
  });

  it('is made at the step boundary 50 ms after the last commit, with however few events', async () => {
    const { journal, clock, emit, commit, committed } = liveJournal();
    emit(3);
    await clock.advance(49);
    await journal.maybeFlush();
    expect(commit).not.toHaveBeenCalled();
    await clock.advance(1);
    await journal.maybeFlush();
    expect(commit).toHaveBeenCalledTimes(1);
    expect((committed()[0]![1] as unknown[]).length).toBe(3);
    // The 50 ms count again from that commit.
    emit(2, 3);
    await clock.advance(49);
    await journal.maybeFlush();
    expect(commit).toHaveBeenCalledTimes(1);
    await clock.advance(1);
    await journal.maybeFlush();
    expect(commit).toHaveBeenCalledTimes(2);
  });
});
