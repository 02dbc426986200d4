/**
 * Replay proves what it claims (GUARANTEES 14), on the built CLI:
 * - a recorded request that the mission now asks for differently (URL, method, body) is a
 *   divergence that names the step, the line and the change — never answered with the recorded
 *   response, never sent under the recorded request's Idempotency-Key;
 * - a run whose own mission cannot replay its log is failed once, with the error, and a worker
 *   does not retry it;
 * - resume is idempotent (a completed run answers "completed", exit 0);
 * - a resumer names the pause it resumes, so a late racer never resumes a later one;
 * - an edit that replays and carries on becomes the run's mission: a crash after it resumes.
 *
 * On every log backend (test/support/temp-log.ts), each test on a fresh log.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type Backend, type TempLogTarget } from '../support/temp-log.js';
import { builtCli, describeResult, REPO, runCli, runIdOf, type CliResult } from './support/cli-build.js';
import { readRunFacts } from './support/run-facts.js';

const FIXTURES = path.join(REPO, 'test/durability/fixtures/identity');
const mission = (name: string): string => path.join(FIXTURES, `${name}.vague`);

let cli: string;
let dir: string;
let db: string;
let target: TempLogTarget | undefined;
let api: FakeApi;

beforeAll(() => {
  cli = builtCli();
}, 180_000);

async function setup(backend: Backend, extraEnv: Record<string, string> = {}): Promise<void> {
  target = await tempLogTarget(backend, 'reqon-identity-');
  dir = target.dir;
  db = target.target;
  baseEnv = { REQON_DATA_DIR: path.join(dir, 'data'), ...extraEnv };
  api = new FakeApi();
  api.on('GET /items', { body: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] });
  for (const route of ['POST /events', 'PUT /events', 'POST /audit', 'POST /done', 'POST /done-again', 'POST /after-first', 'POST /after-second', 'POST /after']) {
    api.on(route, (req) => ({ status: 201, body: { ok: true, got: req.body } }));
  }
  await api.start();
}

let baseEnv: Record<string, string> = {};

afterEach(async () => {
  await api?.stop();
  await target?.drop();
  target = undefined;
});

function reqon(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(cli, [...args, '--db', db], { cwd: dir, env: { ...baseEnv, ...env } });
}

function hits(route: string): number {
  return api.requests.filter((r) => `${r.method} ${r.url.split('?')[0]}` === route).length;
}

/** The Notify run (of `events.vague`, or a copy of it), killed right after its second POST /events was sent (answer not recorded). */
async function crashedWithOneInFlight(name = 'events'): Promise<string> {
  // Points counted over the run: the GET is effect 1, the POSTs 2, 3, 4.
  const run = await reqon(['run', mission(name), '--source', `Api=${api.url}`, '--crash-at', 'after-effect:3', '--quiet']);
  expect(run.signal, describeResult(run)).toBe('SIGKILL');
  expect(hits('POST /events')).toBe(2);
  return runIdOf(run);
}

describe.each(backends)('%s: an edited request is a divergence', (backend) => {
  const edits = [
    { name: 'edited-url', change: /line 8: POST \/events became POST \/audit/, never: 'POST /audit' },
    { name: 'edited-method', change: /line 8: POST \/events became PUT \/events/, never: 'PUT /events' },
    { name: 'edited-body', change: /line 8: the body of POST \/events changed/, never: null },
  ];

  for (const edit of edits) {
    it(`${edit.name}: verify names the line and the change; resume refuses and sends nothing`, async () => {
      await setup(backend);
      const runId = await crashedWithOneInFlight();
      const before = await readRunFacts(db, runId, []);
      const requestsBefore = api.requests.length;

      const verify = await reqon(['verify', runId, '--mission', mission(edit.name)]);
      expect(verify.code, describeResult(verify)).toBe(1);
      expect(verify.stdout).toMatch(/DIVERGED at step Notify\/1\[0\]\/0/);
      expect(verify.stdout).toMatch(edit.change);
      expect(verify.stdout).toMatch(/The edit changes what the run already did/);
      expect(verify.stdout).not.toMatch(/asked for a step\.completed event/);

      const resume = await reqon(['resume', runId, '--mission', mission(edit.name), '--quiet']);
      expect(resume.code, describeResult(resume)).toBe(1);
      expect(resume.stderr).toMatch(/Non-determinism in run \S+ at step Notify\/1\[0\]\/0/);
      expect(resume.stderr).toMatch(edit.change);
      // Nothing was sent (neither the new request nor the in-flight one under the old key) …
      expect(api.requests.length).toBe(requestsBefore);
      if (edit.never) expect(hits(edit.never)).toBe(0);
      // … nothing appended, and the run is still resumable with the mission that recorded it.
      const after = await readRunFacts(db, runId, []);
      expect(after.events.length).toBe(before.events.length);
      expect(after.run.status).toBe('running');

      const finish = await reqon(['resume', runId, '--quiet']);
      expect(finish.code, describeResult(finish)).toBe(0);
      expect(hits('POST /audit') + hits('PUT /events')).toBe(0);
      expect([...api.applied.values()].every((n) => n === 1)).toBe(true);
      expect(api.applied.size).toBe(3);
    });
  }

  it('the mission that recorded the run still verifies clean, and says it checked request identities', async () => {
    await setup(backend);
    const runId = await crashedWithOneInFlight();
    const verify = await reqon(['verify', runId, '--json']);
    expect(verify.code, describeResult(verify)).toBe(3); // unfinished: no divergence so far, not a whole check
    const report = JSON.parse(verify.stdout) as { ok: boolean; diverged: boolean; unchecked: string[] };
    expect(report.ok).toBe(false); // not a whole check: the run has not finished
    expect(report.diverged).toBe(false);
    // Nothing of the log left uncompared (request identities included): only the run's rest.
    expect(report.unchecked).toHaveLength(1);
    expect(report.unchecked[0]).toMatch(/^what the run has yet to do/);
  });
});


describe.each(backends)('%s: an edited source header is a divergence', (backend) => {
  // Before, a request's identity left headers out: a run recorded with X-Tenant: acme verified
  // clean against a mission sending X-Tenant: globex, and a resume sent the in-flight POST for the
  // other tenant under the key of the first.
  it('a changed header value: verify names the line and the change; resume refuses and sends nothing', async () => {
    await setup(backend);
    const runId = await crashedWithOneInFlight('headers');
    expect(api.requests.every((r) => r.headers['x-tenant'] === 'acme')).toBe(true);
    const requestsBefore = api.requests.length;
    const eventsBefore = (await readRunFacts(db, runId, [])).events.length;

    const verify = await reqon(['verify', runId, '--mission', mission('edited-header')]);
    expect(verify.code, describeResult(verify)).toBe(1);
    expect(verify.stdout).toMatch(/DIVERGED at step Notify\/0 /);
    expect(verify.stdout).toMatch(/line 6: the headers of GET \/items changed/);
    // Alike by method, URL and body, the two requests are shown with the parts that tell them apart.
    const recorded = /recorded: (.*)\n/.exec(verify.stdout)?.[1];
    const asked = /replay asked for: (.*)\n/.exec(verify.stdout)?.[1];
    expect(recorded).toMatch(/\[headers sha256 [0-9a-f]{12}, source Api, /);
    expect(asked).not.toBe(recorded);

    const resume = await reqon(['resume', runId, '--mission', mission('edited-header'), '--quiet']);
    expect(resume.code, describeResult(resume)).toBe(1);
    expect(resume.stderr).toMatch(/the headers of GET \/items changed/);
    expect(api.requests.length).toBe(requestsBefore);
    expect((await readRunFacts(db, runId, [])).events.length).toBe(eventsBefore);

    // The mission that recorded it verifies clean, with nothing of its log left unchecked (only
    // the run's rest, as it has not finished), and finishes.
    const clean = await reqon(['verify', runId, '--json']);
    expect(clean.code, describeResult(clean)).toBe(3); // unfinished: no divergence so far, not a whole check
    const unchecked = (JSON.parse(clean.stdout) as { unchecked: string[] }).unchecked;
    expect(unchecked).toHaveLength(1);
    expect(unchecked[0]).toMatch(/^what the run has yet to do/);
    const finish = await reqon(['resume', runId, '--quiet']);
    expect(finish.code, describeResult(finish)).toBe(0);
    expect(api.requests.every((r) => r.headers['x-tenant'] === 'acme')).toBe(true);
    expect([...api.applied.values()].every((n) => n === 1)).toBe(true);
  });

  it('a header added to a source that had none diverges; the same header in other letter case does not', async () => {
    await setup(backend);
    const run = await reqon(['run', mission('events'), '--source', `Api=${api.url}`, '--quiet']);
    expect(run.code, describeResult(run)).toBe(0);
    const runId = runIdOf(run);
    const added = await reqon(['verify', runId, '--mission', mission('headers')]);
    expect(added.code, describeResult(added)).toBe(1);
    expect(added.stdout).toMatch(/line 6: the headers of GET \/items changed/);

    const tenant = await reqon(['run', mission('headers'), '--source', `Api=${api.url}`, '--quiet']);
    expect(tenant.code, describeResult(tenant)).toBe(0);
    const lowerCased = path.join(dir, 'lower-cased.vague');
    fs.writeFileSync(lowerCased, fs.readFileSync(mission('headers'), 'utf8').replace('"X-Tenant"', '"x-tenant"'));
    const same = await reqon(['verify', runIdOf(tenant), '--mission', lowerCased]);
    expect(same.code, describeResult(same)).toBe(0);
  });

  it('a credential in a header, rotated between the crash and the resume, changes nothing: the resume carries on with the new one', async () => {
    await setup(backend);
    const keyed = path.join(dir, 'keyed.vague');
    fs.writeFileSync(keyed, fs.readFileSync(mission('headers'), 'utf8').replace('"X-Tenant": "acme"', '"X-Api-Key": env("REQON_API_KEY")'));
    const run = await reqon(['run', keyed, '--source', `Api=${api.url}`, '--crash-at', 'after-effect:3', '--quiet'], { REQON_API_KEY: 'old-credential-0001' });
    expect(run.signal, describeResult(run)).toBe('SIGKILL');
    const runId = runIdOf(run);
    const resume = await reqon(['resume', runId, '--quiet'], { REQON_API_KEY: 'new-credential-0002' });
    expect(resume.code, describeResult(resume)).toBe(0);
    const keys = api.requests.map((r) => r.headers['x-api-key']);
    expect(keys.slice(0, 3)).toEqual(['old-credential-0001', 'old-credential-0001', 'old-credential-0001']);
    expect(keys.slice(3).every((k) => k === 'new-credential-0002')).toBe(true);
    expect([...api.applied.values()].every((n) => n === 1)).toBe(true);
    // A header whose value is no credential does change the request (the test above): this one is redacted before it is hashed.
    const verify = await reqon(['verify', runId], { REQON_API_KEY: 'new-credential-0002' });
    expect(verify.code, describeResult(verify)).toBe(0);
  });
});
describe.each(backends)('%s: a run that can never replay its log', (backend) => {
  it('is failed once with the divergence, and a worker does not retry it', async () => {
    await setup(backend);
    // REQON_TAG unset at the start: not remembered with the run (a set one would be), so read anew.
    const started = await reqon(['run', mission('env-body'), '--source', `Api=${api.url}`, '--quiet']);
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    // The environment the POST body reads changed: the recorded request is not the one asked for.
    const resumed = await reqon(['resume', runId, '--quiet'], { REQON_TAG: 'second' });
    expect(resumed.code, describeResult(resumed)).toBe(1);
    expect(resumed.stdout).toMatch(/failed: Non-determinism .* the body of POST \/events changed/);
    const failed = await readRunFacts(db, runId, []);
    expect(failed.run.status).toBe('failed');
    expect(failed.events.filter((e) => e.type === 'run.failed')).toHaveLength(1);

    const worker = await reqon(['worker', '--once'], { REQON_TAG: 'second' });
    expect(worker.code, describeResult(worker)).toBe(0);
    const again = await reqon(['resume', runId, '--quiet'], { REQON_TAG: 'second' });
    expect(again.code, describeResult(again)).toBe(1);
    const after = await readRunFacts(db, runId, []);
    expect(after.events.length).toBe(failed.events.length);
    expect(hits('POST /events')).toBe(1);
  });
});

describe.each(backends)('%s: resume is idempotent', (backend) => {
  it('a completed run answers completed (exit 0) and appends nothing', async () => {
    await setup(backend);
    const run = await reqon(['run', mission('events'), '--source', `Api=${api.url}`, '--quiet']);
    expect(run.code, describeResult(run)).toBe(0);
    const runId = runIdOf(run);
    const before = await readRunFacts(db, runId, []);
    const resume = await reqon(['resume', runId]);
    expect(resume.code, describeResult(resume)).toBe(0);
    expect(resume.stdout).toMatch(/^completed: /m);
    expect((await readRunFacts(db, runId, [])).events.length).toBe(before.events.length);
    // A payload for a run that has finished was not used: say so, refused (2), not "failed" (1).
    const withPayload = await reqon(['resume', runId, '--payload', '{"x":1}']);
    expect(withPayload.code).toBe(2);
    expect(withPayload.stderr).toMatch(/payload was not used/);
  });
});

describe.each(backends)('%s: a resumer names the pause it resumes', (backend) => {
  async function firstPause(): Promise<{ runId: string; pause: string }> {
    const started = await reqon(['run', mission('two-pauses'), '--source', `Api=${api.url}`, '--quiet']);
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    const facts = await readRunFacts(db, runId, []);
    return { runId, pause: facts.run.waitingOn!.slice('pause:'.length) };
  }

  it('of racers for the first pause exactly one wins; a late racer never resumes the second', async () => {
    await setup(backend);
    const { runId, pause } = await firstPause();
    const racers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => reqon(['resume', runId, '--pause', pause, '--payload', JSON.stringify({ racer: i }), '--quiet'])),
    );
    const winners = racers.filter((r) => r.code === 10);
    expect(winners, racers.map(describeResult).join('\n')).toHaveLength(1);
    for (const loser of racers.filter((r) => r.code !== 10)) {
      expect(loser.code, describeResult(loser)).toBe(11); // refused: the winner has the run
      expect(loser.stderr).toMatch(/already resumed|no longer waits on/);
    }
    // The winner reached the second pause. A racer for the first, arriving now, changes nothing.
    const late = await reqon(['resume', runId, '--pause', pause, '--payload', '{"late":true}', '--quiet']);
    expect(late.code, describeResult(late)).toBe(11);
    expect(late.stderr).toMatch(/no longer waits on pause:\S+ \(it waits on pause:\S+ now\).*payload was not used/);
    expect(hits('POST /after-first')).toBe(1);
    expect(hits('POST /after-second')).toBe(0);
    const facts = await readRunFacts(db, runId, []);
    expect(facts.events.filter((e) => e.type === 'pause.resumed')).toHaveLength(1);
  });
});

describe.each(backends)('%s: an edit that carries on becomes the run mission', (backend) => {
  it('a crash after a compatible edit resumes with the edited mission', async () => {
    await setup(backend);
    // GET 1, POSTs 2–4: killed after the last POST /events was sent.
    const run = await reqon(['run', mission('events'), '--source', `Api=${api.url}`, '--crash-at', 'after-effect:4', '--quiet']);
    expect(run.signal, describeResult(run)).toBe('SIGKILL');
    const runId = runIdOf(run);
    // The edit appends two POSTs; this resume dies right after the first (/done) is sent.
    const edited = await reqon(['resume', runId, '--mission', mission('appended'), '--crash-at', 'after-effect:5', '--quiet']);
    expect(edited.signal, describeResult(edited)).toBe('SIGKILL');
    expect(hits('POST /done')).toBe(1);
    const plain = await reqon(['resume', runId, '--quiet']);
    expect(plain.code, describeResult(plain)).toBe(0);
    expect(hits('POST /done-again')).toBe(1);
    const facts = await readRunFacts(db, runId, []);
    expect(facts.run.missionFiles.files[0]!.text).toBe(fs.readFileSync(mission('appended'), 'utf8'));
    const adopted = facts.events.filter((e) => e.type === 'run.resumed' && (e.payload as { missionHash?: string }).missionHash);
    expect(adopted).toHaveLength(1);
    expect((adopted[0]!.payload as { missionHash: string }).missionHash).toBe(facts.run.missionHash);
    expect([...api.applied.values()].every((n) => n === 1)).toBe(true);
  });
});

describe.each(backends)('%s: an answer that arrived is never asked for again', (backend) => {
  it('a crash at the store after a POST does not re-send the POST (an API that ignores Idempotency-Key)', async () => {
    await setup(backend);
    // The second record's write is buffered (a store's first write commits at once); killed inside it.
    const run = await reqon(['run', mission('post-then-sql'), '--source', `Api=${api.url}`, '--crash-at', 'mid-store:2', '--quiet']);
    expect(run.signal, describeResult(run)).toBe('SIGKILL');
    expect(hits('POST /events')).toBe(2);
    const resumed = await reqon(['resume', runIdOf(run), '--quiet']);
    expect(resumed.code, describeResult(resumed)).toBe(0);
    // Every POST reached the server once: not once per key, once in all.
    const sent = api.requests.filter((r) => r.method === 'POST').map((r) => (r.body as { id: string }).id);
    expect(sent).toEqual(['a', 'b', 'c']);
    const facts = await readRunFacts(db, runIdOf(run), ['identity_receipts']);
    expect(facts.tables.identity_receipts!.map((r) => r.key)).toEqual(['a', 'b', 'c']);
  });
});

describe.each(backends)('%s: a run acts only on values as the log holds them', (backend) => {
  it('a response number the log cannot hold (1e400) fails its step loudly instead of acting on it', async () => {
    await setup(backend);
    api.on('GET /reading', { raw: '{"value": 1e400}', headers: { 'content-type': 'application/json' } });
    api.on('POST /alarm', { status: 201, body: {} });
    const run = await reqon(['run', mission('huge-number'), '--source', `Api=${api.url}`, '--quiet']);
    expect(run.code, describeResult(run)).toBe(1);
    expect(run.stdout).toMatch(/failed: .*holds Infinity at \$\.value/);
    expect(hits('POST /alarm')).toBe(0);
    const facts = await readRunFacts(db, runIdOf(run), []);
    expect(facts.run.status).toBe('failed');
    // What failed is recorded: a verify of the failed run re-derives the same failure.
    const verify = await reqon(['verify', runIdOf(run)]);
    expect(verify.code, describeResult(verify)).toBe(0);
  });

  it('a --payload the log cannot hold is refused before anything changes', async () => {
    await setup(backend);
    api.on('GET /reading', { body: { value: 1 } });
    const run = await reqon(['run', mission('huge-number'), '--source', `Api=${api.url}`, '--quiet']);
    expect(run.code, describeResult(run)).toBe(10);
    const before = await readRunFacts(db, runIdOf(run), []);
    const resume = await reqon(['resume', runIdOf(run), '--payload', '{"n": -1e999}']);
    expect(resume.code, describeResult(resume)).toBe(2);
    expect(resume.stderr).toMatch(/--payload: the JSON holds -Infinity at \$\.n/);
    const after = await readRunFacts(db, runIdOf(run), []);
    expect(after.events.length).toBe(before.events.length);
    expect(after.run.status).toBe('suspended');
  });
});

describe.each(backends)('%s: resuming a run suspended in a wait', (backend) => {
  it('racers: one wins the suspension they saw; the payload of the winner is its delivery, used once', async () => {
    await setup(backend);
    const started = await reqon(['run', mission('wait-hook'), '--source', `Api=${api.url}`, '--quiet']);
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    const racers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => reqon(['resume', runId, '--payload', JSON.stringify({ racer: i }), '--quiet'])),
    );
    const winners = racers.filter((r) => r.code === 0);
    expect(winners, racers.map(describeResult).join('\n')).toHaveLength(1);
    for (const loser of racers.filter((r) => r.code !== 0)) {
      // 11: another resumer had it; 1: it had completed by the time this one looked (its payload unused).
      expect([1, 11], describeResult(loser)).toContain(loser.code);
      expect(loser.stderr, describeResult(loser)).toMatch(/already resumed|payload .*was not used|already completed|has since completed/);
    }
    const sent = api.requests.filter((r) => r.url === '/after');
    expect(sent).toHaveLength(1);
    const facts = await readRunFacts(db, runId, []);
    const received = facts.events.filter((e) => e.type === 'webhook.received');
    expect(received).toHaveLength(1);
    expect((sent[0]!.body as { got: unknown }).got).toEqual((received[0]!.payload as { payload: unknown }).payload);
    expect(facts.events.filter((e) => e.type === 'run.resumed').length).toBeLessThanOrEqual(2);
  });
});
