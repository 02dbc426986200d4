/**
 * Opening a run (what run.get, run.timeline and run.timelineWindow do) starts its state fold in
 * the background; reading a run's view (what runs.list does for every run) does not. On a real
 * log with a 12k-event run whose response is 3k records (test/bench/studio-big-run.ts), read in
 * pages as the studio reads it; the warmed fold's end equals a fresh fold of the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { outlineMission } from '../../engine/inspect/mission-outline.js';
import { StateAtHandler } from '../../engine/inspect/state-at.js';
import { RunViews } from '../../engine/server/run-views.js';
import { seedBigRun } from '../bench/studio-big-run.js';
import { openTempLog, type TempLog } from '../support/temp-log.js';

let temp: TempLog;
beforeAll(async () => {
  temp = await openTempLog('sqlite', {}, 'reqon-views-open-');
  await seedBigRun(temp.log, { runId: 'opened', total: 12_000, records: 3_000 });
  await seedBigRun(temp.log, { runId: 'listed', total: 12_000, records: 3_000 });
});
afterAll(async () => {
  await temp?.close();
});

describe('RunViews.open', () => {
  it('warms the opened run\'s state fold in the background, and not a run that was only listed', async () => {
    const views = new RunViews(temp.log, () => 0);
    const listed = await views.get('listed');
    const opened = await views.open('opened');
    expect(opened.stateFolded).toBeLessThan(opened.lastSeq);
    for (let i = 0; i < 100 && opened.stateFolded < opened.lastSeq; i += 1) await new Promise((r) => setImmediate(r));
    expect(opened.stateFolded).toBe(opened.lastSeq);
    expect(listed.stateFolded).toBe(0);
    const record = (await temp.log.getRun('opened'))!;
    const fresh = runFold(new StateAtHandler(outlineMission(record.missionFiles), 'opened'), await temp.log.read('opened'));
    expect(opened.cache.stateAt(opened.lastSeq)).toEqual(fresh);
  });
});
