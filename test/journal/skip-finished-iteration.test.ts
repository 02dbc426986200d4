/**
 * Journal.skipFinishedIteration consumes one loop iteration's recorded events without the walk
 * only when the log vouches that the iteration finished and went on to the next one — and never
 * where the walk is not simply following the log.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../engine/env/fake-env.js';
import { Journal, type JournalOptions } from '../../engine/journal/journal.js';
import type { EventType, StoredEvent } from '../../engine/log/events.js';
import { loopConstruct } from '../../engine/journal/step-path.js';

type Entry = [type: EventType, stepPath: string];

/** A loop at `L/0` over `indices`, each iteration a store step; then the loop's own completion. */
function loopLog(indices: number[], body: (index: number) => Entry[] = storeStep, after: Entry[] = [['step.completed', 'L/0']]): StoredEvent[] {
  const entries: Entry[] = [['step.started', 'L/0']];
  for (const index of indices) entries.push(['loop.iteration', `L/0[${index}]`], ...body(index));
  entries.push(...after);
  return entries.map(([type, stepPath], i) => ({ runId: 'r', seq: i + 1, type, stepPath, payload: { i }, recordedAt: i } as unknown as StoredEvent));
}

function storeStep(index: number): Entry[] {
  const path = `L/0[${index}]/0`;
  return [['step.started', path], ['store.write', path], ['step.completed', path]];
}

function journal(events: StoredEvent[], options: JournalOptions = { skipFinished: true }): Journal {
  const j = new Journal(null, null, 'r', events, new FakeClock(0), options);
  expect(j.take('L/0', 'step.started')).toBeDefined();
  return j;
}

describe('Journal.skipFinishedIteration', () => {
  it('consumes a finished iteration whole, and the walk goes on from the next one', () => {
    const j = journal(loopLog([0, 1, 2]));
    expect(j.skipFinishedIteration('L/0[0]', 'L/0[1]')?.map((e) => e.seq)).toEqual([2, 3, 4, 5]);
    expect(j.skipFinishedIteration('L/0[1]', 'L/0[2]')?.map((e) => e.type)).toEqual(['loop.iteration', 'step.started', 'store.write', 'step.completed']);
    // The last iteration: what follows it is the loop's end, not a next iteration — walked.
    expect(j.skipFinishedIteration('L/0[2]', 'L/0[3]')).toBeUndefined();
    expect(j.take('L/0[2]', 'loop.iteration')).toBeDefined();
    for (const type of ['step.started', 'store.write', 'step.completed'] as const) expect(j.take('L/0[2]/0', type)).toBeDefined();
    expect(j.take('L/0', 'step.completed')).toBeDefined();
    expect(j.replaying).toBe(false);
    j.assertFullyConsumed();
  });

  it('tells iteration 1 from iteration 10 (a `where` left out the ones between)', () => {
    const j = journal(loopLog([1, 10, 11]));
    expect(j.skipFinishedIteration('L/0[1]', 'L/0[10]')?.map((e) => e.stepPath)).toEqual(['L/0[1]', 'L/0[1]/0', 'L/0[1]/0', 'L/0[1]/0']);
    expect(j.skipFinishedIteration('L/0[10]', 'L/0[11]')).toHaveLength(4);
  });

  it('takes nested loops, match arms and fallbacks below the iteration with it', () => {
    const body = (i: number): Entry[] => [
      ['step.started', `L/0[${i}]/0`],
      ['loop.iteration', `L/0[${i}]/0[0]`],
      ['store.write', `L/0[${i}]/0[0]/0`],
      ['step.completed', `L/0[${i}]/0`],
      ['step.started', `L/0[${i}]/1>2/0`],
      ['step.completed', `L/0[${i}]/1!/0`],
    ];
    const j = journal(loopLog([0, 1], body));
    expect(j.skipFinishedIteration('L/0[0]', 'L/0[1]')).toHaveLength(7);
  });

  it('walks an iteration that failed (a tolerated failure is more than its events)', () => {
    const body = (i: number): Entry[] => (i === 1 ? [['step.started', 'L/0[1]/0'], ['step.failed', 'L/0[1]/0']] : storeStep(i));
    const j = journal(loopLog([0, 1, 2], body));
    expect(j.skipFinishedIteration('L/0[0]', 'L/0[1]')).toBeDefined();
    expect(j.skipFinishedIteration('L/0[1]', 'L/0[2]')).toBeUndefined();
    expect(j.take('L/0[1]', 'loop.iteration')).toBeDefined();
  });

  it('walks an iteration the log ends in (a crash or a pause inside it), or one a flow signal ended', () => {
    const cut = loopLog([0, 1]).slice(0, -3); // the log ends inside iteration 1
    const j = journal(cut);
    expect(j.skipFinishedIteration('L/0[0]', 'L/0[1]')).toBeDefined();
    expect(j.skipFinishedIteration('L/0[1]', 'L/0[2]')).toBeUndefined();
    // A `jump` out of iteration 0: the loop ends after it although index 1 was selected.
    const jumped = journal(loopLog([0], storeStep, [['step.completed', 'L/0'], ['action.completed', 'L']]));
    expect(jumped.skipFinishedIteration('L/0[0]', 'L/0[1]')).toBeUndefined();
  });

  it('never skips unless allowed, nor when the walk is not following the log in order', () => {
    expect(journal(loopLog([0, 1]), {}).skipFinishedIteration('L/0[0]', 'L/0[1]')).toBeUndefined();
    expect(journal(loopLog([0, 1]), { skipFinished: true, recordAsked: true }).skipFinishedIteration('L/0[0]', 'L/0[1]')).toBeUndefined();
    expect(journal(loopLog([0, 1]), { skipFinished: true, verifyOnly: true }).skipFinishedIteration('L/0[0]', 'L/0[1]')).toBeUndefined();
    const concurrent = journal(loopLog([0, 1]));
    const construct = loopConstruct('L/0');
    concurrent.enterConcurrent(construct);
    expect(concurrent.skipFinishedIteration('L/0[0]', 'L/0[1]')).toBeUndefined();
    concurrent.leaveConcurrent(construct);
    expect(concurrent.skipFinishedIteration('L/0[0]', 'L/0[1]')).toBeDefined();
    // After an out-of-order ask the journal answers by path: the shortcut is off for good.
    const outOfOrder = journal(loopLog([0, 1, 2]));
    expect(outOfOrder.take('L/0[1]', 'loop.iteration')).toBeDefined();
    expect(outOfOrder.skipFinishedIteration('L/0[0]', 'L/0[1]')).toBeUndefined();
    // Not at the iteration's start: the iteration was entered already.
    const entered = journal(loopLog([0, 1]));
    expect(entered.take('L/0[0]', 'loop.iteration')).toBeDefined();
    expect(entered.skipFinishedIteration('L/0[0]', 'L/0[1]')).toBeUndefined();
  });
});
