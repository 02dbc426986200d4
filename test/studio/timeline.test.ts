import { describe, expect, it } from 'vitest';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { TimelineHandler } from '../../engine/inspect/timeline.js';
import { EventBuilder, sampleRun } from './event-builder.js';

describe('TimelineHandler', () => {
  it('closes the steps still open when the run fails: none of a failed run is shown running', () => {
    const log = new EventBuilder();
    log.add('run.started', '', { mission: 'M', missionHash: 'h' });
    log.add('step.started', 'A/0', { stepType: 'For', line: 3 });
    log.add('step.started', 'A/0[1]/0', { stepType: 'Fetch', line: 4 });
    log.add('run.failed', '', { error: { code: 'NONDETERMINISM', message: 'diverged' } });
    const { bars } = runFold(new TimelineHandler(), log.events);
    expect(bars.map((b) => [b.stepPath, b.status, b.endSeq])).toEqual([
      ['A/0', 'failed', 4],
      ['A/0[1]/0', 'failed', 4],
    ]);
  });

  it('builds one lane per action and stage and one bar per step', () => {
    const model = runFold(new TimelineHandler(), sampleRun().events);
    expect(model.lanes).toEqual([{ id: '0:Sync', label: 'Sync · stage 1', stage: 0 }]);
    expect(model.lastSeq).toBe(34);
    const paths = model.bars.map((b) => `${b.stepPath}:${b.status}:${b.startSeq}-${b.endSeq}`);
    expect(paths).toEqual([
      'Sync.0:completed:4-10',
      'Sync.1:completed:11-12',
      'Sync.2:completed:13-17',
      'Sync.3:completed:18-23',
      // The first attempt of the POST died with its process; the restart re-ran it.
      'Sync.4:failed:24-26',
      'Sync.4:completed:27-31',
    ]);
    expect(model.bars.every((b) => b.laneId === '0:Sync')).toBe(true);
  });

  it('places markers for effects, retries, pauses, timers, crash and resume', () => {
    const model = runFold(new TimelineHandler(), sampleRun().events);
    const kinds = model.markers.map((m) => `${m.seq}:${m.kind}`);
    expect(kinds).toEqual([
      '5:effect',
      '6:retry',
      '7:effect',
      '14:effect',
      '15:effect',
      '16:checkpoint',
      '19:pause',
      '20:timer',
      '21:resume',
      '25:effect',
      '26:crash',
      '26:resume',
      '28:effect',
    ]);
    expect(model.markers.find((m) => m.kind === 'retry')!.label).toContain('retry in 100 ms');
    expect(model.markers.find((m) => m.seq === 20)!.laneId).toBeNull();
  });

  it('keeps nested steps, parallel lanes, failures and webhooks apart', () => {
    const log = new EventBuilder();
    log.add('run.started', '', { mission: 'P', missionHash: 'h' });
    log.add('stage.started', '', { index: 0, actions: ['A', 'AB'] });
    log.add('action.started', 'A', { action: 'A', attempt: 1 });
    log.add('action.started', 'AB', { action: 'AB', attempt: 1 });
    log.add('step.started', 'A.0', { stepType: 'for', line: 3 }); // 5
    log.add('step.started', 'AB.0', { stepType: 'wait', line: 9 }); // 6
    log.add('step.started', 'A.0[k1].0', { stepType: 'post', line: 4 }); // 7
    log.add('step.failed', 'A.0[k1].0', { stepType: 'post', error: { code: 'http', message: 'HTTP 400' } }); // 8
    log.add('wait.registered', 'AB.0', { waitId: 'w', path: '/hook', expiresAt: 5, expectedEvents: 1 }); // 9
    log.add('webhook.received', 'AB.0', { waitId: 'w', eventId: 'ev1', payload: {} }); // 10
    log.add('step.completed', 'AB.0', { stepType: 'wait' }); // 11
    const model = runFold(new TimelineHandler(), log.events);
    expect(model.lanes.map((l) => l.id)).toEqual(['0:A', '0:AB']);
    const byPath = Object.fromEntries(model.bars.map((b) => [b.stepPath, b]));
    expect(byPath['A.0']).toMatchObject({ laneId: '0:A', status: 'running', endSeq: 11 });
    expect(byPath['A.0[k1].0']).toMatchObject({ laneId: '0:A', status: 'failed', startSeq: 7, endSeq: 8 });
    expect(byPath['AB.0']).toMatchObject({ laneId: '0:AB', status: 'completed' });
    expect(model.markers.map((m) => `${m.kind}@${m.laneId}`)).toEqual(['error@0:A', 'pause@0:AB', 'webhook@0:AB']);
  });

  it('starts afresh after reset', () => {
    const handler = new TimelineHandler();
    runFold(handler, sampleRun().events);
    const again = runFold(handler, sampleRun().events.slice(0, 4));
    expect(again.bars).toHaveLength(1);
    expect(again.bars[0]!.status).toBe('running');
  });
});
