/**
 * Where a fork's copy of its parent's log ends (engine/executor/fork-run.ts `forkPrefix`): at the
 * seq asked for, but never inside a store batch (one transaction in the parent), never on the
 * parent's own end, and never inside a wait still open there whose path was generated: that path
 * is the parent's URL, and the fork took deliveries sent to the parent (helper 96).
 */
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { forkPrefix } from '../../engine/executor/fork-run.js';

function log(...entries: [string, string, Record<string, unknown>?][]): StoredEvent[] {
  return entries.map(([type, stepPath, payload], i) => ({ runId: 'r', seq: i + 1, type, stepPath, payload: payload ?? {}, recordedAt: 1 }) as StoredEvent);
}

const write = (batch?: string) => ({ effectId: 'e', store: 's', key: 'k', record: {}, op: 'set', ...(batch ? { batch } : {}) });

const EVENTS = log(
  ['run.started', ''], // 1
  ['step.started', 'A/0'], // 2
  ['store.write', 'A/0', write('b1')], // 3  first of batch b1
  ['store.write', 'A/0', write()], // 4
  ['store.write', 'A/0', write()], // 5
  ['store.write', 'A/0', write('b2')], // 6  first of batch b2
  ['store.write', 'A/0', write()], // 7
  ['step.completed', 'A/0'], // 8
  ['run.suspended', ''], // 9
  ['run.resumed', ''], // 10
  ['run.completed', ''], // 11
);

const seqs = (events: StoredEvent[]) => events.map((e) => e.seq);

describe('forkPrefix', () => {
  it('ends at the seq asked for between steps', () => {
    expect(seqs(forkPrefix(EVENTS, 2))).toEqual([1, 2]);
    expect(seqs(forkPrefix(EVENTS, 8))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('moves back before a batch the cut would split', () => {
    expect(seqs(forkPrefix(EVENTS, 3))).toEqual([1, 2]);
    expect(seqs(forkPrefix(EVENTS, 4))).toEqual([1, 2]);
    // The end of a batch is a clean cut; so is the end of the next one.
    expect(seqs(forkPrefix(EVENTS, 5))).toEqual([1, 2, 3, 4, 5]);
    expect(seqs(forkPrefix(EVENTS, 6))).toEqual([1, 2, 3, 4, 5]);
    expect(seqs(forkPrefix(EVENTS, 7))).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('leaves out the parent\'s own end, so the fork goes on from there', () => {
    expect(seqs(forkPrefix(EVENTS, 9))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(seqs(forkPrefix(EVENTS, 11))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(seqs(forkPrefix(log(['run.started', ''], ['run.failed', '']), 2))).toEqual([1]);
  });

  it('ends before the step of a wait with a generated path still open in the copy; a named path, or a completed wait, is copied', () => {
    const waitLog = (path: string, completed: boolean) =>
      log(
        ['run.started', ''], // 1
        ['step.started', 'A/0'], // 2
        ['value.recorded', 'A/0', { source: 'now', value: 1 }], // 3
        ['wait.registered', 'A/0', { waitId: 'w1', path, expiresAt: 9, expectedEvents: 2 }], // 4
        ['webhook.received', 'A/0', { waitId: 'w1', eventId: 'd1', payload: {} }], // 5
        ...(completed ? ([['wait.completed', 'A/0', { waitId: 'w1', events: 2, timedOut: false }]] as [string, string, Record<string, unknown>][]) : []),
        ['run.suspended', ''],
      );
    expect(seqs(forkPrefix(waitLog('/webhook/run_parent/ef_w1', false), 6))).toEqual([1]);
    expect(seqs(forkPrefix(waitLog('/hooks/orders', false), 6))).toEqual([1, 2, 3, 4, 5]);
    expect(seqs(forkPrefix(waitLog('/webhook/run_parent/ef_w1', true), 7))).toEqual([1, 2, 3, 4, 5, 6]);
    // Between the wait's registration time and its registration: before its step too (helper 97).
    expect(seqs(forkPrefix(waitLog('/webhook/run_parent/ef_w1', true), 3))).toEqual([1]);
  });

  it('again until no wait is left open: a cut before one loop iteration\'s wait leaves out an earlier one\'s completion (helper 97)', () => {
    const events = log(
      ['run.started', ''], // 1
      ['value.recorded', 'A/0[0]/0', { source: 'now', value: 1 }], // 2
      ['wait.registered', 'A/0[0]/0', { waitId: 'w0', path: '/webhook/run_p/ef_w0', expiresAt: 9, expectedEvents: 1 }], // 3
      ['value.recorded', 'A/0[1]/0', { source: 'now', value: 1 }], // 4
      ['wait.registered', 'A/0[1]/0', { waitId: 'w1', path: '/webhook/run_p/ef_w1', expiresAt: 9, expectedEvents: 1 }], // 5
      ['webhook.received', 'A/0[0]/0', { waitId: 'w0', eventId: 'd0', payload: {} }], // 6
      ['wait.completed', 'A/0[0]/0', { waitId: 'w0', events: 1, timedOut: false }], // 7
      ['run.suspended', ''], // 8
    );
    expect(seqs(forkPrefix(events, 7))).toEqual([1]);
  });

  it('finds a wait step\'s first events among other branches\' (helper 99)', () => {
    const events = log(
      ['run.started', ''], // 1
      ['value.recorded', 'A/0[0]/0', { source: 'now', value: 1 }], // 2
      ['value.recorded', 'A/0[1]/0', { source: 'now', value: 1 }], // 3
      ['wait.registered', 'A/0[0]/0', { waitId: 'w0', path: '/webhook/run_p/ef_w0', expiresAt: 9, expectedEvents: 1 }], // 4
      ['wait.registered', 'A/0[1]/0', { waitId: 'w1', path: '/webhook/run_p/ef_w1', expiresAt: 9, expectedEvents: 1 }], // 5
      ['run.suspended', ''], // 6
    );
    expect(seqs(forkPrefix(events, 5))).toEqual([1]);
    expect(seqs(forkPrefix(events, 3))).toEqual([1]);
  });
});
