/**
 * `env("NAME")` (GUARANTEES, "What is not promised"): a mission sees the run's `--env` values and,
 * from the process environment, only `REQON_*` variables; a credential-named one is redacted from
 * what the log records of the requests that carry it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
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

let dir: string | undefined;
let api: FakeApi | undefined;
afterEach(async () => {
  await api?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('env() in a mission', () => {
  it('reads --env and REQON_* only, and redacts a credential-named value from the log', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-env-'));
    fs.writeFileSync(path.join(dir, 'envy.vague'), MISSION);
    api = await new FakeApi().on('POST /echo', (req) => ({ status: 201, body: { youSent: req.body } })).start();
    const token = 'tok-0123456789-abcdef';
    const run = await runCli(builtCli(), ['run', 'envy.vague', '--source', `Api=${api.url}`, '--env', 'GIVEN=yes', '--db', path.join(dir, 'r.db'), '--quiet'], {
      cwd: dir,
      env: { HOME: '/home/someone', SOME_SECRET_THING: 'aws-like-secret', REQON_TAG: 'blue', REQON_API_TOKEN: token, REQON_DATA_DIR: path.join(dir, 'data') },
    });
    expect(run.code, describeResult(run)).toBe(0);
    // The request carried what the mission may see: --env and REQON_*, nothing else.
    expect(api.requests[0]!.body).toEqual({ home: '', other: '', tag: 'blue', token, given: 'yes' });
    const { events } = await readRunFacts(path.join(dir, 'r.db'), runIdOf(run), []);
    const logged = JSON.stringify(events);
    expect(logged).not.toContain(token);
    expect(logged).not.toContain('aws-like-secret');
    expect(logged).not.toContain('/home/someone');
    expect(logged).toContain('blue');
  });
});
