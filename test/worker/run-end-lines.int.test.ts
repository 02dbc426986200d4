/**
 * What `reqon worker` prints when a run it carried on ends: a failed run's line gives the failure
 * and where in the mission (FILE:LINE:COL), as `reqon run` and `reqon show` do. Before, it printed
 * "RUN_ID: failed" and nothing else, so a worker's output said a run failed and never why.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeEnv, jsonResponse } from '../../engine/env/fake-env.js';
import { registerSchedule } from '../../engine/worker/schedules.js';
import { Worker } from '../../engine/worker/worker.js';
import { backends, openTempLog, type TempLog } from '../support/temp-log.js';

const mission = (path: string) => `mission Nightly {
  schedule: every 1 hours
  source Api { auth: none, base: "http://fake.test" }
  store done: memory("done")
  action A {
    get "${path}"
    store { id: "x" } -> done { key: .id }
  }
  run A
}
`;

let t: TempLog | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe.each(backends)('%s', (backend) => {
  async function firstPass(requestPath: string): Promise<string[]> {
    t = await openTempLog(backend);
    const env = createFakeEnv({
      autoAdvance: true,
      handler: async (req) => (req.url.endsWith('/gone') ? jsonResponse(404, { error: 'no such thing' }) : jsonResponse(200, { ok: true })),
    });
    const file = path.join(t.dir, 'nightly.vague');
    await registerSchedule(t.log, { entry: file, files: [{ path: file, text: mission(requestPath) }] }, { sources: {}, env: {} }, env.clock.now());
    await env.clock.sleep(3_600_000); // the first firing is due when the pass starts
    const lines: string[] = [];
    const worker = new Worker({ log: t.log, env, dataDir: path.join(t.dir, 'data'), owner: 'lines-worker', pollMs: 100, progress: (line) => lines.push(line) });
    await worker.loop(true);
    return lines;
  }

  it('a failed run: the failure and its place in the mission', async () => {
    const lines = await firstPass('/gone');
    const ended = lines.filter((l) => /^run_\w+: /.test(l));
    expect(ended, lines.join('\n')).toHaveLength(1);
    expect(ended[0]).toMatch(/^run_\w+: failed: .*nightly\.vague:6:5: .*404/);
  });

  it('a completed run: completed', async () => {
    const lines = await firstPass('/ok');
    expect(lines.filter((l) => /^run_\w+: /.test(l)), lines.join('\n')).toEqual([expect.stringMatching(/^run_\w+: completed$/)]);
  });
});
