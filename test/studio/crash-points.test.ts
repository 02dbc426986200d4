import { describe, expect, it } from 'vitest';
import { CrashPointsHandler } from '../../engine/inspect/crash-points.js';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { blankComments, outlineMission } from '../../engine/inspect/mission-outline.js';
import { sampleRun } from './event-builder.js';

describe('CrashPointsHandler', () => {
  it('counts reachable crash points from a reference run', () => {
    const points = runFold(new CrashPointsHandler(), sampleRun().events);
    // Distinct effects: the GET e1 (two attempts count once), the POST e2 (sent again after the
    // crash, same effect) and one store batch s1 (two records, one step). A write to a table in the
    // log's database commits with its events, so it has no after-effect point: 2, not 3.
    expect(points).toEqual([
      { point: 'before-effect', occurrences: 3 },
      { point: 'after-effect', occurrences: 2 },
      { point: 'mid-store', occurrences: 1 },
      { point: 'after-checkpoint', occurrences: 1 },
      { point: 'before-wait', occurrences: 1 },
    ]);
  });

  it('offers nothing for a run without effects', () => {
    expect(runFold(new CrashPointsHandler(), sampleRun().events.slice(0, 4))).toEqual([]);
  });
});

describe('outlineMission', () => {
  it('finds store kinds and the file of each action, ignoring comments', () => {
    const outline = outlineMission({
      entry: 'm/mission.vague',
      files: [
        { path: 'm/mission.vague', text: 'mission M {\n  store orders: sql("orders")\n  // store old: memory("old")\n  store s: memory("x // y")\n  run Load\n}' },
        { path: 'm/load.vague', text: '/* action Nope { */ action Load { get "/x" }' },
      ],
    });
    expect(outline).toEqual({ storeKinds: { orders: 'sql', s: 'memory' }, actionFiles: { Load: 'm/load.vague' }, entryFile: 'm/mission.vague', loops: {} });
  });

  it('finds each loop by file and line, with a dotted collection or none', () => {
    const outline = outlineMission({
      entry: 'm.vague',
      files: [
        {
          path: 'm.vague',
          text: 'action A {\n  for order in response.items where .ok {\n    // for nope in x {\n    for line in order.lines concurrency 2 {\n    }\n    for n in range(0, 3) {}\n    for m in order.marks\n      concurrency 4 {}\n  }\n}',
        },
      ],
    });
    expect(outline.loops).toEqual({
      'm.vague:2': { variable: 'order', collection: ['response', 'items'] },
      'm.vague:4': { variable: 'line', collection: ['order', 'lines'], concurrent: true },
      'm.vague:6': { variable: 'n', collection: null },
      'm.vague:7': { variable: 'm', collection: ['order', 'marks'], concurrent: true },
    });
  });

  it('keeps offsets when blanking comments', () => {
    const text = 'a // b\n"//keep" /* c\nd */ e';
    expect(blankComments(text)).toHaveLength(text.length);
    expect(blankComments(text)).toContain('"//keep"');
  });
});
