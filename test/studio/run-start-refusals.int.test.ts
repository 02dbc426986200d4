/**
 * What the run child refuses as a usage error (exit 2) is a 400 that says what is wrong, never a
 * 500: invalid mission text (its diagnostics, file:line:col), a crash point that is not
 * `POINT[:N]` (with the accepted forms), a source override that is no http(s) URL or names no
 * source of the mission, a name the command line cannot carry — checked before anything is
 * spawned, on run.start, run.crash and the crash lab. What only the child can tell (an edited
 * fork's mission) is read from its exit 2 and its message. A CLI that cannot be started at all
 * stays a 5xx. Against a real server on 127.0.0.1 and the real CLI.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { startStudioServer, type StudioServer } from '../../engine/server/studio-server.js';
import { builtEngine } from '../support/built-engine.js';

interface Reply {
  status: number;
  body: string;
}

function post(server: StudioServer, channel: string, body: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: `/api/${channel}`,
        headers: { host: `127.0.0.1:${server.port}`, 'content-type': 'application/json', 'x-reqon-token': server.token },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const MISSION = 'mission X {\n  source Api { auth: none, base: "http://127.0.0.1:1" }\n  action A { get "/x" }\n  run A\n}\n';

interface Studio {
  dir: string;
  service: StudioService;
  server: StudioServer;
}

async function openStudio(cliPath: (dir: string) => string): Promise<Studio> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-run-refusals-'));
  const staticDir = path.join(dir, 'dist');
  fs.mkdirSync(staticDir);
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>studio</title>');
  const service = await createStudioService({ dbPath: path.join(dir, 'reqon.db'), cliPath: cliPath(dir), cwd: dir, worker: false });
  const server = await startStudioServer({ service, staticDir });
  return { dir, service, server };
}

async function closeStudio(studio: Studio | undefined): Promise<void> {
  if (studio === undefined) return;
  await studio.server.close();
  await studio.service.close();
  fs.rmSync(studio.dir, { recursive: true, force: true });
}

function expect400(reply: Reply, message: RegExp): void {
  expect(reply.status, reply.body).toBe(400);
  expect(JSON.parse(reply.body)).toMatchObject({ code: 'bad-request', message: expect.stringMatching(message) });
}

describe('with the real CLI', () => {
  let studio: Studio;
  beforeAll(async () => {
    studio = await openStudio(() => builtEngine().cli);
  }, 180_000);
  afterAll(() => closeStudio(studio));

  const api = (channel: string, body: unknown) => post(studio.server, channel, body);

  it.each(['run.start', 'crashlab.start'])('%s: bad input is a 400 saying what is wrong, and no run is left behind', async (channel) => {
    const crashAt = channel === 'crashlab.start' ? { crashAt: 'after-effect:1' } : {};
    expect400(await api(channel, { missionText: 'mission mission', ...crashAt }), /the mission does not pass its checks:\n.*mission-[0-9a-f]+\.vague:1:16: error\[E2001\]: Expected "\{" but found end of file/);
    expect400(await api(channel, { missionText: MISSION, crashAt: 'bogus' }), /"crashAt": invalid crash point "bogus": expected POINT or POINT:N with POINT one of before-effect, after-effect, .* or random, and N ≥ 1/);
    expect400(await api(channel, { missionText: MISSION, crashAt: 'after-effect:0' }), /invalid crash point "after-effect:0"/);
    expect400(await api(channel, { missionText: MISSION, sources: { Api: 'notaurl' }, ...crashAt }), /"sources\.Api": "notaurl" is not an absolute http\(s\) URL/);
    expect400(await api(channel, { missionText: MISSION, sources: { Api: 'ftp://127.0.0.1/x' }, ...crashAt }), /"sources\.Api": "ftp:\/\/127\.0\.0\.1\/x" is not an absolute http\(s\) URL/);
    expect400(await api(channel, { missionText: MISSION, sources: { Api: 'http://user:pw@127.0.0.1:1' }, ...crashAt }), /"sources\.Api": the URL carries a user name or password/);
    expect400(await api(channel, { missionText: MISSION, sources: { Nope: 'http://127.0.0.1:1' }, ...crashAt }), /"sources\.Nope": the mission declares no source named "Nope" \(its sources: Api\)/);
    expect400(await api(channel, { missionText: MISSION, env: { '': 'x' }, ...crashAt }), /"env": "" is not a name/);
    expect400(await api(channel, { missionText: MISSION, env: { 'a=b': 'x' }, ...crashAt }), /"env": "a=b" is not a name/);
    expect(JSON.parse((await api('runs.list', {})).body)).toEqual({ runs: [], total: 0 });
  });

  it('run.crash: a crash point that is not POINT[:N] is a 400 before anything is looked up or spawned', async () => {
    expect400(await api('run.crash', { runId: 'run_none', crashAt: 'mid-stor' }), /"crashAt": invalid crash point "mid-stor"/);
  });

  it('starts a good request, and maps what only the child refuses (exit 2) to a 400 with its message', async () => {
    const started = await api('run.start', { missionText: MISSION, sources: { Api: 'http://127.0.0.1:1/api' } });
    expect(started.status, started.body).toBe(200);
    const { runId } = JSON.parse(started.body) as { runId: string };
    // A fork with an edited mission: the `reqon fork` child checks it and exits 2 with its diagnostics.
    const forked = await api('run.fork', { runId, atSeq: 1, missionText: 'mission mission' });
    expect400(forked, /reqon fork refused the request: .*mission-[0-9a-f]+\.vague:1:16: error\[E2001\]/s);
    // An edit that parts from the copied prefix: `reqon fork` refuses it with exit 1 — a 409 with its message, not a 500 (helper 64).
    const parted = await api('run.fork', { runId, atSeq: 5, missionText: MISSION.replace('"/x"', '"/y"') });
    expect(parted.status, parted.body).toBe(409);
    expect(JSON.parse(parted.body)).toMatchObject({ code: 'conflict', message: expect.stringMatching(/^reqon fork refused the request: reqon: .*(Non-determinism|diverge|parts)/s) });
  }, 60_000);

  it('a log another process holds locked past the child\'s wait is a 503, retryable, not a 400 (helper 82)', async () => {
    const { default: Database } = await import('better-sqlite3');
    const holder = new Database(path.join(studio.dir, 'reqon.db'));
    holder.exec('BEGIN IMMEDIATE');
    try {
      const refused = await api('run.start', { missionText: MISSION, sources: { Api: 'http://127.0.0.1:1/api' } });
      expect(refused.status, refused.body).toBe(503);
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'unavailable', retryable: true, message: expect.stringMatching(/^reqon run could not write the log: .*the log is locked by another process and stayed locked/s) });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    const again = await api('run.start', { missionText: MISSION, sources: { Api: 'http://127.0.0.1:1/api' } });
    expect(again.status, again.body).toBe(200);
  }, 60_000);

  it('run.crash arming an occurrence the run\'s log already holds says the resume ended without it (helper 98: a bare 200)', async () => {
    const paused = await api('run.start', { missionText: 'mission P {\n  action A {\n    pause { resumeOn: webhook "/ok" }\n  }\n  run A\n}\n' });
    expect(paused.status, paused.body).toBe(200);
    const { runId } = JSON.parse(paused.body) as { runId: string };
    for (let i = 0; i < 200 && (JSON.parse((await api('run.get', { runId })).body) as { status: string }).status !== 'suspended'; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    let passed = await api('run.crash', { runId, crashAt: 'before-wait:1' });
    // Suspended, its process may still be closing the log (under load, for a moment): the studio
    // says so (409, "still executing") and is asked again once it has exited.
    for (let i = 0; i < 200 && passed.status === 409 && /is still executing/.test(passed.body); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      passed = await api('run.crash', { runId, crashAt: 'before-wait:1' });
    }
    expect(passed.status, passed.body).toBe(200);
    expect(JSON.parse(passed.body)).toMatchObject({ runId, note: 'the resume ended (completed) without reaching before-wait:1: nothing was killed' });
  }, 60_000);

  it('run.resume (and run.crash arming a crash point) of a run while the log is locked past the child\'s wait: a 503, retryable — not "running" for a resume that changed nothing (helper 88)', async () => {
    const paused = await api('run.start', { missionText: 'mission P {\n  action A {\n    pause { resumeOn: webhook "/ok" }\n  }\n  run A\n}\n' });
    expect(paused.status, paused.body).toBe(200);
    const { runId } = JSON.parse(paused.body) as { runId: string };
    for (let i = 0; i < 200 && (JSON.parse((await api('run.get', { runId })).body) as { status: string }).status !== 'suspended'; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const { default: Database } = await import('better-sqlite3');
    const holder = new Database(path.join(studio.dir, 'reqon.db'));
    holder.exec('BEGIN IMMEDIATE');
    try {
      const refused = await api('run.resume', { runId, payload: { ok: true } });
      expect(refused.status, refused.body).toBe(503);
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'unavailable', retryable: true, message: expect.stringMatching(/the log is locked by another process and stayed locked/) });
      // Arming a crash point resumes the run too: it said 200 while nothing was armed (helper 89).
      const armed = await api('run.crash', { runId, crashAt: 'after-effect' });
      expect(armed.status, armed.body).toBe(503);
      expect(JSON.parse(armed.body)).toMatchObject({ code: 'unavailable', retryable: true });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(JSON.parse((await api('run.get', { runId })).body)).toMatchObject({ status: 'suspended' });
  }, 60_000);
});

describe('a CLI that refuses, and one that cannot start', () => {
  let refusing: Studio | undefined;
  let missing: Studio | undefined;
  beforeAll(async () => {
    refusing = await openStudio((dir) => {
      const cli = path.join(dir, 'refusing-cli.mjs');
      fs.writeFileSync(cli, "process.stderr.write('reqon: something only the CLI can tell\\n');\nprocess.exit(2);\n");
      return cli;
    });
    missing = await openStudio((dir) => path.join(dir, 'no-such-cli.mjs'));
  });
  afterAll(async () => {
    await closeStudio(refusing);
    await closeStudio(missing);
  });

  it('an exit 2 before the run is named is a 400 with the child\'s own message', async () => {
    expect400(await post(refusing!.server, 'run.start', { missionText: MISSION }), /reqon run refused the request: reqon: something only the CLI can tell/);
  });

  it('a CLI that cannot be started stays a 5xx (spawn-failed)', async () => {
    const reply = await post(missing!.server, 'run.start', { missionText: MISSION });
    expect(reply.status, reply.body).toBe(500);
    expect(JSON.parse(reply.body)).toMatchObject({ code: 'spawn-failed' });
  });
});
