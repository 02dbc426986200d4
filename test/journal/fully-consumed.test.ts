/**
 * What a walk that left recorded events unasked says of the first of them: that the mission
 * finished without reaching it only when nothing after it was asked for; when the walk went on
 * past it (a step removed from a loop's body), that it went on past it (helper 38: the message
 * said "finished without reaching it" of a step the replay had walked past).
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../engine/env/fake-env.js';
import { Journal } from '../../engine/journal/journal.js';
import type { EventType, StoredEvent } from '../../engine/log/events.js';

function log(entries: [EventType, string][]): StoredEvent[] {
  return entries.map(([type, stepPath], i) => ({ runId: 'r', seq: i + 1, type, stepPath, payload: {}, recordedAt: i }) as unknown as StoredEvent);
}

const EVENTS = log([
  ['step.started', 'A/0'],
  ['step.completed', 'A/0'],
  ['step.started', 'A/1'],
  ['step.completed', 'A/1'],
]);

function unasked(walk: (j: Journal) => void): string {
  const j = new Journal(null, null, 'r', EVENTS, new FakeClock(0), {});
  walk(j);
  try {
    j.assertFullyConsumed();
  } catch (error) {
    return (error as Error).message;
  }
  return 'fully consumed';
}

describe('Journal.assertFullyConsumed', () => {
  it('says the mission finished without reaching events nothing after was asked for', () => {
    const message = unasked((j) => {
      j.take('A/0', 'step.started');
      j.take('A/0', 'step.completed');
    });
    expect(message).toContain('finished without reaching it');
    expect(message).toContain('A/1');
  });

  it('says the walk went on past an event when later ones were asked for', () => {
    const message = unasked((j) => {
      j.take('A/1', 'step.started');
      j.take('A/1', 'step.completed');
    });
    expect(message).toContain('the walk went on past it without asking for it');
    expect(message).toContain('A/0');
  });
});
