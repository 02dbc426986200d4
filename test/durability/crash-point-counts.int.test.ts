/**
 * One table of effect kinds → crash points (engine/journal/effects.ts) drives both the injector
 * and the studio's crash-point fold. Proven end to end: for a mission with every effect kind (a
 * streamed paginated sync into sql, GET, POSTs, file and memory store batches, a pause), the fold
 * of a crash-free run offers POINT:N for each point; `--crash-at POINT:N` with that N kills the
 * run (counted over the run's whole progress, resumes included), and N+1 never does. On every
 * log backend (test/support/temp-log.ts): the counts are the executor's, the kill lands between
 * the log's commits, whichever database holds them.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrashPointsHandler } from '../../engine/inspect/crash-points.js';
import { runFold } from '../../engine/inspect/fold-handler.js';
import type { CrashPointInfo } from '../../engine/protocol/protocol.js';
import { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type Backend, type TempLogTarget } from '../support/temp-log.js';
import { builtCli, describeResult, REPO, runCli, runIdOf, type CliResult } from './support/cli-build.js';
import { readRunFacts } from './support/run-facts.js';

const MISSION = path.join(REPO, 'test/durability/fixtures/identity/points.vague');
const ROWS = Array.from({ length: 5 }, (_, i) => ({ id: `r${i}` }));

let cli: string;
let api: FakeApi;
const targets: TempLogTarget[] = [];

beforeAll(async () => {
  cli = builtCli();
  api = new FakeApi();
  for (let offset = 0; offset <= ROWS.length; offset += 2) api.on(`GET /rows?offset=${offset}`, { body: ROWS.slice(offset, offset + 2) });
  api.on('GET /items', { body: [{ id: 'a' }, { id: 'b' }] });
  api.on('POST /events', { status: 201, body: { ok: true } });
  await api.start();
}, 180_000);

afterAll(async () => {
  await api?.stop();
  for (const target of targets.splice(0)) await target.drop();
});

/** Runs the mission to its end (resuming past its pause) on a fresh log, armed with `crashAt` in every process. */
async function runToEnd(backend: Backend, crashAt?: string): Promise<{ killed: boolean; db: string; runId: string; results: CliResult[] }> {
  const target = await tempLogTarget(backend, 'reqon-points-');
  targets.push(target);
  const { dir, target: db } = target;
  const env = { REQON_DATA_DIR: path.join(dir, 'data') };
  const armed = crashAt ? ['--crash-at', crashAt] : [];
  const results: CliResult[] = [];
  let result = await runCli(cli, ['run', MISSION, '--source', `Api=${api.url}`, '--db', db, '--quiet', ...armed], { cwd: dir, env });
  results.push(result);
  const runId = runIdOf(result);
  for (let round = 0; round < 6 && result.code !== 0; round++) {
    if (result.signal === 'SIGKILL') return { killed: true, db, runId, results };
    expect(result.code, describeResult(result)).toBe(10);
    await new Promise((r) => setTimeout(r, 20)); // the pause is 1 ms
    result = await runCli(cli, ['resume', runId, '--db', db, '--quiet', ...armed], { cwd: dir, env });
    results.push(result);
  }
  if (result.signal === 'SIGKILL') return { killed: true, db, runId, results };
  expect(result.code, results.map(describeResult).join('\n')).toBe(0);
  return { killed: false, db, runId, results };
}

describe.each(backends)('%s: crash points offered by the fold are where the injector kills', (backend) => {
  let offered: CrashPointInfo[] = [];

  it('the fold of a crash-free run offers every point', async () => {
    const reference = await runToEnd(backend);
    expect(reference.killed).toBe(false);
    const { events } = await readRunFacts(reference.db, reference.runId, []);
    offered = runFold(new CrashPointsHandler(), events);
    // GET /rows ×3 pages, GET /items, POST ×2: 6 requests; table batches: 3 streamed pages + 2
    // memory writes; file batches: 2. The sync's checkpoint: none (no `since`). One pause.
    expect(offered).toEqual([
      { point: 'before-effect', occurrences: 6 + 5 + 2 },
      { point: 'after-effect', occurrences: 6 + 2 },
      { point: 'mid-store', occurrences: 5 + 2 },
      { point: 'before-wait', occurrences: 1 },
    ]);
  });

  for (const point of ['before-effect', 'after-effect', 'mid-store', 'before-wait']) {
    it(`${point}: the last offered occurrence kills, the next one never does`, async () => {
      const info = offered.find((p) => p.point === point);
      expect(info, 'the reference test ran first').toBeDefined();
      const last = await runToEnd(backend, `${point}:${info!.occurrences}`);
      expect(last.killed, last.results.map(describeResult).join('\n')).toBe(true);
      const past = await runToEnd(backend, `${point}:${info!.occurrences + 1}`);
      expect(past.killed, past.results.map(describeResult).join('\n')).toBe(false);
    });
  }
});
