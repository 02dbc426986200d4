/**
 * Run bundles on the built CLI: `reqon export ID > run.reqonrun` on one machine (a log), `reqon
 * import run.reqonrun` on another (a second log). The round trip keeps the run's events and mission
 * exactly, verify replays the imported run, and no resume or worker continues it; no secret of the
 * run (bearer token from --auth, a credential-named --env value) is in
 * the bundle; a corrupt or hostile bundle is refused with the problem and where it is, and leaves
 * the log as it was.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { createStudioService } from '../../engine/server/studio-service.js';
import { openLog } from '../../engine/log/open-log.js';
import { FakeApi } from '../support/fake-api.js';
import { builtCli, describeResult, runCli, runIdOf } from '../durability/support/cli-build.js';

const TOKEN = 'BEARER-SECRET-7f3a9c41';
const ENV_SECRET = 'ENV-SECRET-55e1d0aa';
const MISSION = `mission Bundled {
  source Api { auth: bearer, base: "http://127.0.0.1:9" }
  store out: sql("bundle_out")

  action Pull {
    get "/orders"
    for order in response {
      post "/confirmations" { body: { id: order.id } }
      store { id: order.id, status: response.status } -> out { key: .id }
    }
  }

  action Hold {
    pause { duration: "1h" }
  }

  run Pull then Hold
}
`;

let cli: string;
let dir: string;
let api: FakeApi;
const dbA = () => path.join(dir, 'a.db');
const dbB = () => path.join(dir, 'b.db');

const reqon = (db: string, ...args: string[]) => runCli(cli, [...args, '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

async function readLog(db: string, runId: string): Promise<{ events: StoredEvent[]; owner: string | null; status: string } | null> {
  const log = await openLog(db);
  try {
    const run = await log.getRun(runId);
    return run ? { events: await log.read(runId), owner: run.owner, status: run.status } : null;
  } finally {
    await log.close();
  }
}

let runId: string;
let bundleText: string;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-bundle-'));
  fs.writeFileSync(path.join(dir, 'bundled.vague'), MISSION);
  fs.writeFileSync(path.join(dir, 'auth.json'), JSON.stringify({ Api: { type: 'bearer', token: TOKEN } }));
  api = new FakeApi();
  let calls = 0;
  api.on('GET /orders', () => ({ status: 200, body: [{ id: 'o-1', at: ++calls }, { id: 'o-2', at: ++calls }] }));
  // A 422 for the second order: a bundle carries failures as they were.
  api.on('POST /confirmations', (req) => ((req.body as { id: string }).id === 'o-2' ? { status: 422, body: { error: 'no stock' } } : { status: 201, body: { status: 'ok' } }));
  await api.start();
  const run = await reqon(dbA(), 'run', 'bundled.vague', '--auth', 'auth.json', '--env', `API_TOKEN=${ENV_SECRET}`, '--env', 'REGION=eu', '--source', `Api=${api.url}`, '--quiet');
  expect([1, 10], describeResult(run)).toContain(run.code);
  runId = runIdOf(run);
}, 180_000);

afterAll(async () => {
  await api?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('reqon export / reqon import', () => {
  it('exports the run with its mission and events and without its secrets', async () => {
    const exported = await reqon(dbA(), 'export', runId);
    expect(exported.code, describeResult(exported)).toBe(0);
    bundleText = exported.stdout;
    const bundle = JSON.parse(bundleText) as { reqonRunBundle: number; run: { runId: string; missionFiles: { files: { text: string }[] }; options: { env: Record<string, string>; sources: Record<string, string>; authFile?: string } }; events: unknown[] };
    expect(bundle.reqonRunBundle).toBe(1);
    expect(bundle.run.runId).toBe(runId);
    expect(bundle.run.missionFiles.files[0]!.text).toBe(MISSION);
    expect(bundle.run.options.env).toEqual({ API_TOKEN: '[redacted]', REGION: 'eu' });
    expect(bundle.run.options.sources).toEqual({ Api: api.url });
    expect(bundle.run.options.authFile).toBeUndefined();
    const original = await readLog(dbA(), runId);
    expect(bundle.events).toHaveLength(original!.events.length);
    for (const secret of [TOKEN, ENV_SECRET]) expect(bundleText).not.toContain(secret);
    expect(bundleText).not.toContain(path.join(dir, 'auth.json'));
  });

  it('imports it into another log with the same events, read-only, and verify replays it', async () => {
    const file = path.join(dir, 'run.reqonrun');
    fs.writeFileSync(file, bundleText);
    const imported = await reqon(dbB(), 'import', file);
    expect(imported.code, describeResult(imported)).toBe(0);
    expect(imported.stdout.split('\n')[0]).toBe(`run ${runId}`);
    // What it is, not the 'running' its record keeps to hold workers off it.
    expect(imported.stdout.split('\n')[1]).toMatch(/^imported \d+ events \(suspended\), read-only$/);
    const a = await readLog(dbA(), runId);
    const b = await readLog(dbB(), runId);
    const strip = (e: StoredEvent) => ({ seq: e.seq, type: e.type, stepPath: e.stepPath, payload: e.payload, recordedAt: e.recordedAt });
    expect(b!.events.map(strip)).toEqual(a!.events.map(strip));
    expect(b!.owner).toBe('imported:bundle');

    const verified = await reqon(dbB(), 'verify', runId);
    expect(verified.code, describeResult(verified)).toBe(3);
    expect(verified.stdout).toMatch(/not checked: what the run had yet to do — it was imported from a bundle before its end/);
    expect(verified.stdout).not.toMatch(/it is running/);
    const listed = JSON.parse((await reqon(dbB(), 'runs', '--json')).stdout) as { runId: string; imported?: boolean }[];
    // Suspended, as its log says, in the list and its filters too (probe 109 K2) — not the 'running'
    // its record keeps to hold workers off it.
    expect(listed.find((r) => r.runId === runId)).toMatchObject({ imported: true, status: 'suspended' });
    const ids = async (status: string) => (JSON.parse((await reqon(dbB(), 'runs', '--status', status, '--json')).stdout) as { runId: string }[]).map((r) => r.runId);
    expect(await ids('suspended')).toContain(runId);
    expect(await ids('running')).not.toContain(runId);
    const store = await reqon(dbB(), 'store', runId, 'out', '--json');
    expect(store.code, describeResult(store)).toBe(0);
    expect(JSON.parse(store.stdout)).toEqual(JSON.parse((await reqon(dbA(), 'store', runId, 'out', '--json')).stdout));

    // Never continued: not by resume, not by a worker pass; the log stays as imported.
    const posts = api.requests.length;
    const resumed = await reqon(dbB(), 'resume', runId, '--quiet');
    expect(resumed.code, describeResult(resumed)).toBe(2); // refused, as it was: not 1, "failed" (probe 106 K1)
    // Said as it is, in one line: not "owned by imported:bundle until 2126 …; it is still running
    // there", nor (with a payload) "it was already resumed".
    const readOnly = new RegExp(`^reqon: run ${runId} was imported from a bundle and is read-only: nothing continues it.*reqon fork ${runId} --at SEQ`);
    expect(resumed.stderr.trim().split('\n')).toHaveLength(1);
    expect(resumed.stderr).toMatch(readOnly);
    const withPayload = await reqon(dbB(), 'resume', runId, '--payload', '{"ok":true}', '--quiet');
    expect(withPayload.code, describeResult(withPayload)).toBe(2);
    expect(withPayload.stderr).toMatch(readOnly);
    expect(withPayload.stderr).toMatch(/your payload was not used/);
    const shown = await reqon(dbB(), 'show', runId);
    expect(shown.stdout).toMatch(/^status +suspended \(imported from a bundle: read-only\)$/m);
    // --json says the same: suspended and imported, not the 'running' its row keeps to hold workers off.
    expect(JSON.parse((await reqon(dbB(), 'show', runId, '--json')).stdout)).toMatchObject({ status: 'suspended', imported: true });
    // The studio says what its log waits on — the hour's timer, until when — not "an external
    // event, no deadline" (helper 83); its banner offers no Resume (RunHeaderWaitBanner).
    const pause = a!.events.find((e) => e.type === 'pause.created')!.payload as { dueAt: number };
    const studio = await createStudioService({ dbPath: dbB(), cliPath: cli, cwd: dir, worker: false });
    try {
      expect(await studio.handle('run.get', { runId })).toMatchObject({ status: 'suspended', imported: true, waitingOn: 'timer', wakeAt: pause.dueAt });
    } finally {
      await studio.close();
    }
    expect((await reqon(dbB(), 'runs')).stdout).toMatch(new RegExp(`^${runId}  imported `, 'm'));
    const worker = await reqon(dbB(), 'worker', '--once');
    expect(worker.code, describeResult(worker)).toBe(0);
    expect(api.requests.length).toBe(posts);
    expect((await readLog(dbB(), runId))!.events.map(strip)).toEqual(a!.events.map(strip));

    // Importing the same run twice is refused.
    const again = await reqon(dbB(), 'import', file);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already in this log/);
  });

  it.each([
    ['not JSON', () => 'hello', /not JSON/],
    ['another kind of file', () => JSON.stringify({ hello: 1 }), /reqonRunBundle: expected 1/],
    ['events out of order', () => mutate((b) => ([b.events[1], b.events[2]] = [b.events[2], b.events[1]])), /events\[1\]\.seq: expected 2/],
    ['an unknown event type', () => mutate((b) => (b.events[3]!.type = 'run.pwned')), /events\[3\]\.type: not an event type/],
    ['an edited mission text', () => mutate((b) => (b.run.missionFiles.files[0]!.text += '\n// edited')), /does not match its hash/],
    ['a hostile run id', () => mutate((b) => (b.run.runId = '../../etc/passwd')), /run\.runId: expected a run id/],
    ['a newer log format', () => mutate((b) => ((b.events[0]!.payload as { format: number }).format = 99)), /log format 99/],
    ['a payload with a huge number', () => bundleText.replace('"recordedAt":', '"recordedAt":1e400,"ignored":'), /events\[0\]\.recordedAt: expected an integer/],
    ['events missing', () => mutate((b) => (b.events = [])), /events\[0\]: expected the run.started event first/],
    // Probe 112 K9: a cut bundle of a finished run was imported as one "stopped before its end", exit 0.
    ['a "completed" run whose events stop before run.completed', () => mutate((b) => (b.run.status = 'completed')), /run\.status says completed, but the events end at seq \d+ with run\.suspended, not run\.completed: the bundle was cut or edited/],
    ['a "failed" run whose events stop before run.failed', () => mutate((b) => (b.run.status = 'failed')), /run\.status says failed, but the events end at seq \d+ with run\.suspended, not run\.failed/],
    [
      'a "suspended" run whose events end with run.completed',
      () => mutate((b) => b.events.push({ ...b.events.at(-1)!, seq: b.events.length + 1, type: 'run.completed', stepPath: '', payload: {} })),
      /run\.status: says suspended, but the events end with run\.completed: the bundle was edited/,
    ],
  ])('refuses %s with the problem and where, writing nothing', async (_name, make, message) => {
    const file = path.join(dir, `bad-${Math.random().toString(36).slice(2)}.reqonrun`);
    fs.writeFileSync(file, make());
    const db = path.join(dir, `empty-${path.basename(file)}.db`);
    const result = await reqon(db, 'import', file);
    expect(result.code, describeResult(result)).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    const runs = await reqon(db, 'runs', '--json');
    expect(JSON.parse(runs.stdout || '[]')).toEqual([]);
  });
});

interface MutableBundle {
  run: { runId: string; status: string; missionFiles: { files: { text: string }[] } };
  events: { seq: number; type: string; stepPath: string; payload: unknown }[];
}

function mutate(change: (bundle: MutableBundle) => void): string {
  const bundle = JSON.parse(bundleText) as MutableBundle;
  change(bundle);
  return JSON.stringify(bundle);
}
