/**
 * A parallel stage's failure is drawn in the lane of the action that failed: in a stage running
 * A and B side by side, B's failure ends the stage while A's steps were the last to move, and the
 * stage's and the run's failure markers go to B's lane, not to the lane that moved last.
 */
import { describe, expect, it } from 'vitest';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { TimelineHandler } from '../../engine/inspect/timeline.js';
import { EventBuilder } from './event-builder.js';

describe('timeline failure markers in a parallel stage', () => {
  it('go to the lane of the action that failed', () => {
    const log = new EventBuilder('run-par');
    const error = { code: 'http-status', message: 'POST /b failed with 422' };
    log.add('run.started', '', { mission: 'Par', missionHash: 'h' });
    log.add('stage.started', ':stage/0', { index: 0, actions: ['A', 'B'] });
    log.add('action.started', 'B', { action: 'B', attempt: 1 });
    log.add('action.started', 'A', { action: 'A', attempt: 1 }); // the lane that moved last is A's
    log.add('step.started', 'B/0', { stepType: 'Fetch', line: 9 });
    log.add('step.started', 'A/0', { stepType: 'Fetch', line: 4 });
    log.add('step.failed', 'B/0', { stepType: 'Fetch', error });
    log.add('action.failed', 'B', { action: 'B', error });
    log.add('step.completed', 'A/0', { stepType: 'Fetch' });
    log.add('action.completed', 'A', { action: 'A', outcome: 'done' });
    log.add('stage.failed', ':stage/0', { index: 0, error });
    log.add('run.failed', '', { error });
    const model = runFold(new TimelineHandler('run-par'), log.events);
    const errors = model.markers.filter((m) => m.kind === 'error');
    expect(errors.map((m) => [m.label.split(':')[0], m.laneId])).toEqual([
      ['POST /b failed with 422', '0:B'],
      ['action B failed', '0:B'],
      ['stage failed', '0:B'],
      ['run failed', '0:B'],
    ]);
  });
});
