/**
 * `env("NAME")` (GUARANTEES, "What is not promised"): a mission sees the run's `--env` values and,
 * from the process environment, only `REQON_*` variables; a credential-named one is redacted from
 * what the log records of the requests that carry it — on every log backend (test/support/temp-log.ts).
 * The `REQON_*` values a mission reads are remembered with the run when it starts (never a
 * credential-named one): a resume by a process where one is unset or other, and a verify there,
 * read the run's own (helper 94: the resume failed the run for good, the verify said DIVERGED).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type TempLogTarget } from '../support/temp-log.js';
import { builtCli, describeResult, runCli, runIdOf } from './support/cli-build.js';
import { openLog } from '../../engine/log/open-log.js';
import { prepareNewRun } from '../../engine/executor/run-start.js';
import { createFakeEnv } from '../../engine/env/fake-env.js';
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

  it('remembers the REQON_* values it reads: a resume and a verify where they are unset or other read the run\'s own', async () => {
    target = await tempLogTarget(backend, 'reqon-env-');
    const { dir, target: db } = target;
    const mission = `mission Tenant {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  action Send {
    for i in [1, 2, 3] {
      post "/echo/{REQON_SHARD}" { body: { i: i, tenant: env("REQON_TENANT"), token: env("REQON_API_TOKEN") } }
    }
  }
  run Send
}
`;
    fs.writeFileSync(path.join(dir, 'tenant.vague'), mission.replace('source Api { auth: none, base: "http://127.0.0.1:1" }', 'source Api { auth: none, base: "http://127.0.0.1:1", headers: { "Authorization": "Bearer ${REQON_GH_PAT}" } }').replace('token: env("REQON_API_TOKEN") }', 'token: env("REQON_API_TOKEN") }, headers: { "X-Auth-Token": concat("v1:", env("REQON_SIGNER")), "X-Region": env("REQON_REGION") }'));
    api = await new FakeApi().on('POST /echo/s1', (req) => ({ status: 201, body: { youSent: req.body } })).start();
    const token = 'tok-0123456789-abcdef';
    const data = path.join(dir, 'data');
    const killed = await runCli(cli, ['run', 'tenant.vague', '--source', `Api=${api.url}`, '--db', db, '--quiet', '--crash-at', 'after-effect:1'], {
      cwd: dir,
      env: { REQON_TENANT: 't1', REQON_SHARD: 's1', REQON_API_TOKEN: token, REQON_GH_PAT: 'ghp-not-named-as-secret-1', REQON_SIGNER: 'signer-not-named-as-secret-2', REQON_REGION: 'eu', REQON_DATA_DIR: data },
    });
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);
    // Another machine's worker: no REQON_SHARD, another tenant; the token is read where the run goes on.
    const resumed = await runCli(cli, ['resume', runId, '--db', db, '--quiet'], {
      cwd: dir,
      env: { REQON_TENANT: 't2', REQON_API_TOKEN: token, REQON_GH_PAT: 'ghp-not-named-as-secret-1', REQON_SIGNER: 'signer-not-named-as-secret-2', REQON_DATA_DIR: data },
    });
    expect(resumed.code, describeResult(resumed)).toBe(0);
    // Killed after the first POST was sent, before its answer was logged: it is sent again, same key.
    expect(new Set(api.requests.map((r) => String(r.headers['idempotency-key']))).size).toBe(3);
    expect(new Set(api.requests.map((r) => (r.body as { tenant: string }).tenant))).toEqual(new Set(['t1']));
    expect(new Set(api.requests.map((r) => (r.body as { token: string }).token))).toEqual(new Set([token]));
    const log = await openLog(db);
    try {
      const run = await log.getRun(runId);
      // Never one the mission puts where a credential goes, by a header's name (helper 95).
      expect(run!.options.env).toEqual({ REQON_TENANT: 't1', REQON_SHARD: 's1', REQON_REGION: 'eu' });
    } finally {
      await log.close();
    }
    // The verifier has none of the remembered ones, and other secrets (rotated): they replay alike.
    const verified = await runCli(cli, ['verify', runId, '--db', db], {
      cwd: dir,
      env: { REQON_API_TOKEN: 'another-token-987654321', REQON_GH_PAT: 'ghp-rotated-value-9', REQON_SIGNER: 'signer-rotated-value-9', REQON_DATA_DIR: data },
    });
    expect(api.requests.every((r) => r.headers['x-region'] === 'eu' && r.headers['authorization'] === 'Bearer ghp-not-named-as-secret-1')).toBe(true);
    expect(verified.code, describeResult(verified)).toBe(0);
  });

  it('remembers what is recorded anyway, never what the redactor hides by its name (helper 97)', () => {
    const text = `mission Where {
  source Api { auth: none, base: "http://127.0.0.1:1", headers: { "X-Api-Key": "\${REQON_HEADER_K}", "X-Tenant": "\${REQON_TENANT}" } }
  store seen: memory("seen")
  action A {
    get "/items?api_key={REQON_QUERY_K}&page={REQON_PAGE}" { params: { token: env("REQON_PARAM_T"), region: env("REQON_REGION") } }
    post "/things" { body: { client_secret: env("REQON_BODY_S"), nested: { password: env("REQON_BODY_P") } } }
    store response -> seen { key: concat(env("REQON_KEYED"), .id) }
    get "/repos?access_token=" + env("REQON_GH_PAT")
    get concat("/more?page=", env("REQON_MORE"), "&api_key=", env("REQON_CONCAT_K"))
  }
  run A
}
`;
    const names = ['REQON_HEADER_K', 'REQON_TENANT', 'REQON_QUERY_K', 'REQON_PAGE', 'REQON_PARAM_T', 'REQON_REGION', 'REQON_BODY_S', 'REQON_BODY_P', 'REQON_KEYED', 'REQON_GH_PAT', 'REQON_MORE', 'REQON_CONCAT_K'];
    const vars = Object.fromEntries(names.map((n) => [n, `value-of-${n}`]));
    const file = path.join(os.tmpdir(), 'where.vague');
    const prepared = prepareNewRun({ entry: file, files: [{ path: file, text }] }, { sources: {}, env: {} }, { log: undefined as never, env: createFakeEnv({ vars }), dataDir: os.tmpdir() });
    // Headers and query parameters named as credentials are redacted by name: never remembered.
    // A body field is recorded as sent (redact.ts: bodies by value only), so it is remembered as the log holds it.
    expect(Object.keys(prepared.run.options.env).sort()).toEqual(['REQON_BODY_P', 'REQON_BODY_S', 'REQON_KEYED', 'REQON_MORE', 'REQON_PAGE', 'REQON_REGION', 'REQON_TENANT']);
  });
});
