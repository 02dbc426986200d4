/**
 * A run bundle is checked for event types, seqs and loggable payloads, not each payload's
 * fields, so a bundle whose http.request had no `request`, or whose step.failed error was a
 * string, imported — and then blanked the studio's page or ended its process (a5c9bd6, e79bb36).
 * firstUnreadableEvent feeds the events to the studio's folds and names the first they cannot
 * read; run.import and `reqon import` refuse such a bundle with it. Every run the engine writes
 * (here the sample run) passes.
 */
import { describe, expect, it } from 'vitest';
import { firstUnreadableEvent } from '../../engine/inspect/readable-events.js';
import { EventBuilder, sampleRun } from './event-builder.js';

const files = { entry: 'orders.vague', files: [{ path: 'orders.vague', text: 'mission Orders {}\n' }] };

describe('firstUnreadableEvent', () => {
  it('passes a run the engine wrote', () => {
    expect(firstUnreadableEvent('run-1', files, sampleRun().events)).toBeNull();
  });

  it('names an http.request without its request', () => {
    const log = new EventBuilder();
    log.add('run.started', '', { mission: 'Orders', missionHash: 'h1' });
    log.add('step.started', 'Sync/0', { stepType: 'Fetch', line: 5 });
    log.add('http.request', 'Sync/0', {} as never);
    expect(firstUnreadableEvent('run-1', files, log.events)).toMatchObject({ index: 2, seq: 3, type: 'http.request' });
  });

  it('names a step.failed whose error is not an object', () => {
    const log = new EventBuilder();
    log.add('run.started', '', { mission: 'Orders', missionHash: 'h1' });
    log.add('step.started', 'Sync/0', { stepType: 'Fetch', line: 5 });
    log.add('step.failed', 'Sync/0', { stepType: 'Fetch', error: 'not an object' } as never);
    expect(firstUnreadableEvent('run-1', files, log.events)).toMatchObject({ seq: 3, type: 'step.failed' });
  });

  it('names a step.failed whose place (error.at) is not a string: every surface prints it', () => {
    const log = new EventBuilder();
    log.add('run.started', '', { mission: 'Orders', missionHash: 'h1' });
    log.add('step.started', 'Sync/0', { stepType: 'Fetch', line: 5 });
    log.add('step.failed', 'Sync/0', { stepType: 'Fetch', error: { code: 'E', message: 'm', at: { line: 1 } } } as never);
    expect(firstUnreadableEvent('run-1', files, log.events)).toMatchObject({ seq: 3, type: 'step.failed' });
  });
});
