/**
 * The studio protocol's channel lists, pinned: adding, removing or renaming a channel changes
 * this test, so every protocol change is visible in review (the renderer codes against it).
 */
import { describe, expect, it } from 'vitest';
import { isRequestChannel, PUSH_CHANNELS, REQUEST_CHANNELS } from '../../engine/protocol/channels.js';

describe('studio protocol channels', () => {
  it('request channels', () => {
    expect([...REQUEST_CHANNELS].sort()).toEqual([
      'crash.points',
      'crashlab.chaos',
      'crashlab.ofRun',
      'crashlab.start',
      'crashlab.verdict',
      'run.crash',
      'run.eventSearch',
      'run.events',
      'run.export',
      'run.fork',
      'run.get',
      'run.import',
      'run.resume',
      'run.source',
      'run.start',
      'run.stateAt',
      'run.stateDiff',
      'run.timeline',
      'run.timelineWindow',
      'run.verify',
      'run.watch',
      'runs.list',
      'studio.info',
    ]);
  });

  it('push channels', () => {
    expect([...PUSH_CHANNELS].sort()).toEqual(['crashlab.changed', 'process.exited', 'run.appended', 'runs.changed']);
  });

  it('recognises only listed channels', () => {
    expect(isRequestChannel('run.get')).toBe(true);
    expect(isRequestChannel('run.delete')).toBe(false);
    expect(isRequestChannel('__proto__')).toBe(false);
  });
});
