/**
 * GUARANTEES 12: a credential the run was given never reaches the log, however the mission uses
 * it — here in a query parameter and a body field whose names mark no credential. Before log
 * format 5 a source's credentials were known only once its first request was sent, after that
 * request's identity was computed: the identity held the token in clear, and verify then called
 * the engine's own log damaged (its copy showed [REDACTED]). A credential of a source the run
 * never sends to (its REQON_<SOURCE>_* variables) is a secret too.
 *
 * Logs of format 4 hold such identities; they still verify and resume (the identity is compared
 * as the older engine computed it), while a format-5 log holding one is another request. On both
 * backends.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { forkRun } from '../../engine/executor/fork-run.js';
import { resumeRun } from '../../engine/executor/run-resume.js';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { openConformance, writeAuthFile, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';
import { insertStoredRun, openTempLog, type TempLog } from './support/stored-log.js';

const TOKEN = 'tok-api-0123456789';
const OTHER_KEY = 'key-other-9876543210';

const MISSION = `mission Given {
  source Api { auth: bearer, base: "http://127.0.0.1:1" }
  source Other { auth: api_key, base: "http://127.0.0.1:1" }
  store got: memory("got")
  action A {
    get "/whoami" { params: { check: env("PAT") } }
    store response -> got { key: .id }
    post "/notes" { body: { note: env("NOTE"), check: env("PAT") } }
    get "/again" { params: { check: env("PAT") } }
  }
  run A
}
`;

let c: Conformance | undefined;
const temps: TempLog[] = [];
afterEach(async () => {
  for (const t of temps.splice(0)) await t.close();
  await c?.close();
  c = undefined;
});

type RequestEvent = StoredEvent<'http.request'>;
const requests = (events: readonly StoredEvent[]) => events.filter((e): e is RequestEvent => e.type === 'http.request');

describe.each(backends)('%s: every credential the run was given is redacted from its first request', (backend) => {
  async function recorded() {
    c = await openConformance({ backend, vars: { REQON_OTHER_API_KEY: OTHER_KEY } });
    c.api.on(`GET /whoami?check=${TOKEN}`, { status: 200, body: [{ id: 'me' }] });
    c.api.on('POST /notes', { status: 201, body: { ok: true } });
    c.api.on(`GET /again?check=${TOKEN}`, { status: 200, body: [] });
    const files = c.mission('given', MISSION);
    const authFile = writeAuthFile(c.dir, { Api: { type: 'bearer', token: TOKEN } });
    const options = { sources: { Api: c.api.url }, env: { PAT: TOKEN, NOTE: OTHER_KEY }, authFile };
    const result = await c.start(files, options);
    expect(result.status, result.status === 'failed' ? result.error.message : '').toBe('completed');
    return { runId: result.runId, files, options, events: await c.events(result.runId) };
  }

  it('the log holds neither credential, the API got both, and the run verifies whole', async () => {
    const { runId, events } = await recorded();
    // Sent as the mission asked: the token in the query, the other source's key in the body.
    expect(c!.api.requests.filter((r) => r.url.includes(`check=${TOKEN}`)).length).toBe(2);
    expect(c!.api.requests.find((r) => r.method === 'POST')!.body).toEqual({ note: OTHER_KEY, check: TOKEN });
    const logged = JSON.stringify(events);
    expect(logged).not.toContain(TOKEN);
    expect(logged).not.toContain(OTHER_KEY);
    for (const request of requests(events)) expect(request.payload.identity!.url).not.toContain(TOKEN);
    const report = await verifyRun(c!.log, runId, { env: c!.env });
    expect(report.divergence, JSON.stringify(report.divergence)).toBeNull();
    expect(fullyVerified(report)).toBe(true);
  });

  it('killed after its first request, the run resumes to the same log and verifies whole', async () => {
    const { events, files, options } = await recorded();
    const firstAnswer = events.findIndex((e) => e.type === 'http.response');
    const log = await openTempLog(backend, {}, 'reqon-given-');
    temps.push(log);
    const runId = await insertStoredRun(log.log, { events: events.slice(0, firstAnswer + 1), missionFiles: files, options, crashed: true });
    const resumed = await resumeRun(runId, {}, { ...c!.deps(), log: log.log });
    expect(resumed.status, resumed.status === 'failed' ? resumed.error.message : '').toBe('completed');
    const after = await log.log.read(runId);
    expect(JSON.stringify(after)).not.toContain(TOKEN);
    expect(requests(after).map((e) => e.payload.identity)).toEqual(requests(events).map((e) => e.payload.identity));
    expect(fullyVerified(await verifyRun(log.log, runId, { env: c!.env }))).toBe(true);
  });

  /** The log as a format-4 engine wrote it: the first request's identity with the token in clear. */
  function asFormat(events: readonly StoredEvent[], format: number): StoredEvent[] {
    const first = requests(events)[0]!;
    return events.map((e) => {
      if (e.type === 'run.started') return { ...e, payload: { ...e.payload, format } } as StoredEvent;
      if (e !== first) return e;
      const identity = { ...first.payload.identity!, url: first.payload.identity!.url.replace('[REDACTED]', TOKEN) };
      return { ...first, payload: { ...first.payload, identity } } as StoredEvent;
    });
  }

  it('a format-4 log whose first identity holds the token verifies and resumes; in format 5 it is another request', async () => {
    const { events, files, options } = await recorded();
    const load = async (stored: StoredEvent[], crashed = false) => {
      const log = await openTempLog(backend, {}, 'reqon-given-old-');
      temps.push(log);
      return { log: log.log, runId: await insertStoredRun(log.log, { events: stored, missionFiles: files, options, crashed }) };
    };

    const old = await load(asFormat(events, 4));
    const report = await verifyRun(old.log, old.runId, { env: c!.env });
    expect(report.divergence, JSON.stringify(report.divergence)).toBeNull();
    expect(fullyVerified(report)).toBe(true);

    // Killed after that request's answer: resumed by this engine, it goes on from the log.
    const oldEvents = asFormat(events, 4);
    const crashed = await load(oldEvents.slice(0, oldEvents.findIndex((e) => e.type === 'http.response') + 1), true);
    const resumed = await resumeRun(crashed.runId, {}, { ...c!.deps(), log: crashed.log });
    expect(resumed.status, resumed.status === 'failed' ? resumed.error.message : '').toBe('completed');
    // What it wrote itself is redacted.
    expect(JSON.stringify((await crashed.log.read(crashed.runId)).slice(oldEvents.findIndex((e) => e.type === 'http.response') + 1))).not.toContain(TOKEN);

    const now = await load(asFormat(events, 5));
    const diverged = await verifyRun(now.log, now.runId, { env: c!.env });
    expect(diverged.ok).toBe(false);
    expect(diverged.divergence).toMatchObject({ stepPath: 'A/0' });
  });

  it("a failure's message holds no credential: replayed (a fork cut before it) or cut to an excerpt", async () => {
    // Helper 55: a replayed failure's message was built from the mission's unredacted URL (a
    // Telegram-style token in the path), and an answer's excerpt was cut before it was redacted,
    // leaving a token's first characters in the run's failure.
    const BOT = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';
    c = await openConformance({ backend });
    c.api.on(`POST /bot${encodeURIComponent(BOT)}/sendMessage`, { status: 422, body: { ok: false, description: 'chat not found' } });
    const files = c.mission('bot', `mission Bot {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  action A {
    post "/bot{BOT_TOKEN}/sendMessage" { body: { chat: 1 } }
  }
  run A
}
`);
    const run = await c.start(files, { env: { BOT_TOKEN: BOT } });
    expect(run.status).toBe('failed');
    const answered = (await c.events(run.runId)).find((e) => e.type === 'http.response')!;
    const fork = await forkRun(run.runId, { atSeq: answered.seq }, c.deps());
    expect(fork.status).toBe('failed');
    const forked = await c.events(fork.runId);
    expect(forked.find((e) => e.type === 'step.failed')!.payload).toMatchObject({ error: { message: expect.stringContaining('failed with 422') } });
    expect(JSON.stringify(forked)).not.toContain('AAHdq');
    expect(fork.status === 'failed' ? fork.error.message : '').not.toContain('AAHdq');

    const KEY = 'tok-secret-abcdefghijklm';
    c.api.on('GET /html', { status: 200, headers: { 'content-type': 'text/html' }, raw: `<html><body>Bad request for https://api.example.com/v1/things?key=${KEY}</body></html>` });
    const html = await c.start(c.mission('html', `mission Html {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  action A {
    get "/html" { headers: { "X-Api-Key": env("KEY") } }
  }
  run A
}
`), { env: { KEY } });
    expect(html.status).toBe('failed');
    expect(html.status === 'failed' ? html.error.message : '').toContain('expected a JSON body');
    const logged = JSON.stringify(await c.events(html.runId));
    expect(logged).not.toContain(KEY.slice(0, 8));
  });

  it('an oauth2 refresh that replaces the token in the --auth file: verify and a resume still know the old one as a credential', async () => {
    // Helper 56: verify re-read the rotated file, no longer knew the token the run was given, took
    // the request holding it (env("PAT")) for another — and a resume failed the run, writing the
    // token in clear into its failure. The run.started keeps salted digests, never the token.
    const OLD = 'old-access-token-0123456789';
    const NEW = 'new-access-token-9876543210';
    c = await openConformance({ backend });
    c.api.on(`GET /items?check=${OLD}`, (req) => (req.headers.authorization === `Bearer ${OLD}` ? { status: 401, body: { error: 'expired' } } : { status: 200, body: [{ id: 1 }] }));
    c.api.on('POST /notes', { status: 201, body: { ok: true } });
    c.api.on('POST /token', { status: 200, body: { access_token: NEW, token_type: 'bearer', expires_in: 3600 } });
    const files = c.mission('rotate', `mission Rotate {
  source Api { auth: oauth2, base: "http://127.0.0.1:1" }
  action A {
    get "/items" { params: { check: env("PAT") } }
    post "/notes" { body: { check: env("PAT") } }
  }
  run A
}
`);
    const authFile = writeAuthFile(c.dir, { Api: { type: 'oauth2', accessToken: OLD, refreshToken: 'refresh-token-2222', tokenEndpoint: `${c.api.url}/token`, clientId: 'cid', clientSecret: 'client-secret-3333' } });
    const options = { sources: { Api: c.api.url }, env: { PAT: OLD }, authFile };
    const run = await c.start(files, options);
    expect(run.status, run.status === 'failed' ? run.error.message : '').toBe('completed');
    expect(JSON.parse(fs.readFileSync(authFile, 'utf8')).Api.accessToken).toBe(NEW);
    const events = await c.events(run.runId);
    expect(JSON.stringify(events)).not.toContain(OLD);
    expect((events[0]!.payload as { credentials?: unknown[] }).credentials).toHaveLength(1);
    const report = await verifyRun(c!.log, run.runId, { env: c!.env });
    expect(report.divergence, JSON.stringify(report.divergence)).toBeNull();
    expect(fullyVerified(report)).toBe(true);

    // Killed after the refresh, before the POST: resumed with the rotated file, it goes on.
    const afterRefresh = events.findIndex((e) => e.type === 'fetch.completed');
    const log = await openTempLog(backend, {}, 'reqon-rotated-');
    temps.push(log);
    const runId = await insertStoredRun(log.log, { events: events.slice(0, afterRefresh + 1), missionFiles: files, options, crashed: true });
    const resumed = await resumeRun(runId, {}, { ...c!.deps(), log: log.log });
    expect(resumed.status, resumed.status === 'failed' ? resumed.error.message : '').toBe('completed');
    expect(JSON.stringify(await log.log.read(runId))).not.toContain(OLD);
  });
});
