/**
 * `env("NAME")` (GUARANTEES, "What is not promised"): a mission sees the run's `--env` values and,
 * from the process environment, only `REQON_*` variables; a credential-named one is redacted from
 * what the log records of the requests that carry it — on every log backend (test/support/temp-log.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type TempLogTarget } from '../support/temp-log.js';
import { builtCli, describeResult, runCli, runIdOf } from './support/cli-build.js';
import { readRunFacts } from './support/run-facts.js';

const MISSION = `mission Envy {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  action Send {
    post "/echo" { body: { home: env("HOME"), other: env("SOME_SECRET_THING"), tag: env("REQON_TAG"), token: env("REQON_API_TOKEN"), given: env("GIVEN") } }
  }
  run Send
}
`;

let cli: string;
// The CLI is built once per source state, outside any test's time limit.
beforeAll(() => {
  cli = builtCli();
}, 180_000);

let target: TempLogTarget | undefined;
let api: FakeApi | undefined;
afterEach(async () => {
  await api?.stop();
  await target?.drop();
  target = undefined;
});

describe.each(backends)('%s: env() in a mission', (backend) => {
  it('reads --env and REQON_* only, and redacts a credential-named value from the log', async () => {
    target = await tempLogTarget(backend, 'reqon-env-');
    const { dir, target: db } = target;
    fs.writeFileSync(path.join(dir, 'envy.vague'), MISSION);
    api = await new FakeApi().on('POST /echo', (req) => ({ status: 201, body: { youSent: req.body } })).start();
    const token = 'tok-0123456789-abcdef';
    const run = await runCli(cli, ['run', 'envy.vague', '--source', `Api=${api.url}`, '--env', 'GIVEN=yes', '--db', db, '--quiet'], {
      cwd: dir,
      env: { HOME: '/home/someone', SOME_SECRET_THING: 'aws-like-secret', REQON_TAG: 'blue', REQON_API_TOKEN: token, REQON_DATA_DIR: path.join(dir, 'data') },
    });
    expect(run.code, describeResult(run)).toBe(0);
    // The request carried what the mission may see: --env and REQON_*, nothing else.
    expect(api.requests[0]!.body).toEqual({ home: '', other: '', tag: 'blue', token, given: 'yes' });
    const { events } = await readRunFacts(db, runIdOf(run), []);
    const logged = JSON.stringify(events);
    expect(logged).not.toContain(token);
    expect(logged).not.toContain('aws-like-secret');
    expect(logged).not.toContain('/home/someone');
    expect(logged).toContain('blue');
  });
});
