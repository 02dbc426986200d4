/**
 * GUARANTEES 7: a read (GET) is not an external effect — its request and answer ride on the run's
 * next commit, so one a crash cuts off before that commit is read again on resume, from the API as
 * it answers then, and the run goes on with that answer, not the lost one.
 *
 * On the built CLI, on every log backend: the GET of fixtures/read-again.vague is answered, then
 * the process is killed before its answer was committed (`after-effect:1`, the GET being the run's
 * first effect point). The API answers each GET with a new version.
 */
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type Backend, type TempLogTarget } from '../support/temp-log.js';
import { builtCli, describeResult, REPO, runCli, runIdOf, type CliResult } from './support/cli-build.js';

const MISSION = path.join(REPO, 'test/durability/fixtures/read-again.vague');

let cli: string;
let target: TempLogTarget | undefined;
let api: FakeApi | undefined;

beforeAll(() => {
  cli = builtCli();
}, 180_000);

afterEach(async () => {
  await api?.stop();
  api = undefined;
  await target?.drop();
  target = undefined;
});

describe.each(backends)('%s: a GET cut off by a crash', (backend: Backend) => {
  it('is sent again on resume, and the run stores the answer the API gives then', async () => {
    target = await tempLogTarget(backend, 'reqon-read-again-');
    const { dir, target: db } = target;
    let version = 0;
    api = new FakeApi();
    api.on('GET /price', () => ({ status: 200, body: { id: 'p-1', version: ++version } }));
    await api.start();
    const reqon = (args: string[]): Promise<CliResult> =>
      runCli(cli, [...args, '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

    const crashed = await reqon(['run', MISSION, '--source', `Api=${api.url}`, '--crash-at', 'after-effect:1', '--quiet']);
    expect(crashed.signal, describeResult(crashed)).toBe('SIGKILL');
    expect(version, 'the API answered the first GET').toBe(1);
    const runId = runIdOf(crashed);
    // The answer died with the process: the log holds no http.response yet.
    const before = await reqon(['events', runId, '--json']);
    expect(before.stdout).not.toMatch(/"type":"http\.response"/);

    const resumed = await reqon(['resume', runId, '--quiet']);
    expect(resumed.code, describeResult(resumed)).toBe(0);
    expect(version, 'the GET was sent again on resume').toBe(2);
    const stored = await reqon(['store', runId, 'prices', '--json']);
    expect(JSON.parse(stored.stdout)).toEqual([{ key: 'p-1', record: { id: 'p-1', version: 2 } }]);
    // The log records one answer to that GET: the one the run went on with.
    const events = (await reqon(['events', runId, '--json'])).stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; payload: Record<string, unknown> });
    const answers = events.filter((e) => e.type === 'http.response');
    expect(answers).toHaveLength(1);
    expect(JSON.stringify(answers[0]!.payload)).toContain('"version":2');
    // A second resume reads nothing again: the answer is recorded now.
    const again = await reqon(['resume', runId, '--quiet']);
    expect(again.code, describeResult(again)).toBe(0);
    expect(version).toBe(2);
  }, 120_000);
});
