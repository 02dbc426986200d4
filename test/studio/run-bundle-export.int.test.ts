/**
 * `exportRunText`, the one writer of run bundles (`reqon export` and the studio's export): it
 * streams a page of events at a time, and the pieces join to exactly the JSON of the bundle —
 * checked here on a run longer than one page (8,000+ events, pages of 5,000), with the answer's
 * payload text (escapes, non-ASCII) as the log holds it. The bundle is the run as it stood when
 * the export began: events a live run appends after that are not in it, so its status and its
 * events agree.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import { exportRunText, parseBundle } from '../../engine/executor/run-bundle.js';
import type { EventLog, MissionFiles } from '../../engine/log/log.js';
import { openTempLog, type TempLog } from '../support/temp-log.js';

const LONG = `mission Long {
  store rows: sql("export_rows")
  action Fill {
    for i in range(0, 2000) {
      store { id: i, note: "é \\"q\\" \\u2028 line" } -> rows { key: .id }
    }
  }
  run Fill
}
`;

async function collect(pieces: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const piece of pieces) out.push(piece);
  return out;
}

let temp: TempLog | undefined;
afterEach(async () => {
  await temp?.close();
  temp = undefined;
});

async function longRun(): Promise<{ log: EventLog; runId: string }> {
  temp = await openTempLog('sqlite', {}, 'reqon-export-');
  const file = path.join(temp.dir, 'long.vague');
  fs.writeFileSync(file, LONG);
  const files: MissionFiles = { entry: file, files: [{ path: file, text: LONG }] };
  const result = await startRun(files, { sources: {}, env: {} }, { log: temp.log, env: createRealEnv({}), dataDir: path.join(temp.dir, 'data') });
  expect(result.status).toBe('completed');
  return { log: temp.log, runId: result.runId };
}

describe('exporting a run bundle', () => {
  it('streams pages whose text joins to the JSON of the whole bundle', async () => {
    const { log, runId } = await longRun();
    const run = (await log.getRun(runId))!;
    const events = await log.read(runId);
    expect(events.length).toBeGreaterThan(8000);

    const pieces = await collect(exportRunText(log, runId));
    // More than one page of events: the head, two or more pages, the tail.
    expect(pieces.length).toBeGreaterThanOrEqual(4);
    const whole = {
      reqonRunBundle: 1,
      // A bundle carries the run's sources and settings, not this machine's auth file or data folder.
      run: { runId, mission: run.mission, missionHash: run.missionHash, missionFiles: run.missionFiles, options: { sources: run.options.sources, env: run.options.env }, status: run.status, createdAt: run.createdAt },
      events: events.map((e) => ({ seq: e.seq, type: e.type, stepPath: e.stepPath, payload: e.payload, recordedAt: e.recordedAt })),
    };
    const text = pieces.join('');
    expect(text).toBe(`${JSON.stringify(whole)}\n`);
    // And it is a bundle an import takes whole.
    expect(parseBundle(text).events).toHaveLength(events.length);
  });

  it('holds the events up to where the run stood when the export began', async () => {
    const { log, runId } = await longRun();
    const run = (await log.getRun(runId))!;
    // The run as a reader saw it mid-way: 5,001 events (a page and one), status running.
    const cut = 5001;
    const earlier: EventLog = new Proxy(log, {
      get(target, prop, receiver) {
        if (prop === 'getRun') return async () => ({ ...run, lastSeq: cut, status: 'running' });
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const bundle = JSON.parse((await collect(exportRunText(earlier, runId))).join('')) as { run: { status: string }; events: { seq: number }[] };
    expect(bundle.run.status).toBe('running');
    expect(bundle.events.map((e) => e.seq)).toEqual(Array.from({ length: cut }, (_, i) => i + 1));
  });

  it('names a run the log does not hold', async () => {
    temp = await openTempLog('sqlite', {}, 'reqon-export-');
    await expect(collect(exportRunText(temp.log, 'run_nope'))).rejects.toThrow(/no run run_nope in this log/);
  });
});
