/**
 * Many workers on many (simulated) machines sharing one PostgreSQL log — real processes, real
 * clock, a counting HTTP server:
 *
 * Three `reqon worker` processes, each its own host (`$REQON_HOST_ID` machine-a/b/c), lease TTL
 * 3 s, each serving webhooks and registering an `every 1 seconds` schedule. 120 runs are started
 * (from the test process, a fourth "machine"): each POSTs, pauses on a 400 ms timer, POSTs, pauses
 * for a webhook, POSTs and writes a sql row. Mid-way machine-a is killed with kill -9 while it
 * holds runs; the others cannot see its PIDs and take its runs over when their leases expire by
 * the database's clock. The 120 webhook deliveries (plus a resend of some) go to machine-b and c.
 *
 * Then: every run completed; every POST applied exactly once per Idempotency-Key at the server;
 * every delivery claimed by exactly one run (a resend was a duplicate); every schedule firing
 * distinct, with one run each, each run's POST applied once; the runs machine-a held were
 * finished by machine-b or c.
 * Skipped, with the reason printed, where no PostgreSQL cluster could be started.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import type { EventLog, MissionFiles } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type TempLogTarget } from '../support/temp-log.js';
import { buildCli, type CliBuild } from '../time/support/build-cli.js';
import { killAll, spawnNode, waitFor, type Running } from '../time/support/processes.js';

const pgOnly = backends.filter((b) => b === 'postgres');
const RUNS = 120;
const FLOW = `mission Flow {
  source Api { auth: none, base: "http://placeholder.test" }
  store done: sql("flow_done")
  action A {
    post "/effects" { body: { run: env("N"), step: "one" } }
    pause { duration: "400ms" }
    post "/effects" { body: { run: env("N"), step: "two" } }
    pause { resumeOn: webhook "/approve" }
    post "/effects" { body: { run: env("N"), step: "three", approval: response } }
    store { id: env("N"), ok: true } -> done { key: .id }
  }
  run A
}
`;
const TICK = `mission Tick {
  schedule: every 1 seconds
  source Api { auth: none, base: "http://placeholder.test" }
  action A {
    post "/ticks" { body: { tick: true } }
  }
  run A
}
`;

let build: CliBuild;
let db: TempLogTarget | undefined;
let api: FakeApi;
let log: EventLog | undefined;

beforeAll(() => {
  if (pgOnly.length > 0) build = buildCli();
}, 180_000);
afterEach(() => killAll());
afterAll(async () => {
  await log?.close();
  await api?.stop();
  await db?.drop();
});

function spawnWorker(host: string, dir: string, tick: string): Running {
  return spawnNode(
    build.cli,
    ['worker', tick, '--db', db!.target, '--source', `Api=${api.url}`, '--listen', '0', '--poll', '100', '--lease-ttl', '3000', '--concurrency', '10'],
    { cwd: dir, env: { REQON_HOST_ID: host, REQON_DATA_DIR: path.join(dir, `data-${host}`) } },
  );
}

describe.each(pgOnly)('many workers on one %s log', () => {
  it(`3 workers on 3 hosts, ${RUNS} runs with timers, webhook pauses and POSTs, a kill -9 mid-way, a schedule: everything once`, async () => {
    db = await tempLogTarget('postgres', 'reqon-many-');
    const dir = db.dir;
    api = new FakeApi()
      .on('POST /effects', async () => {
        await new Promise((r) => setTimeout(r, 25));
        return { status: 201, body: { ok: true } };
      })
      .on('POST /ticks', { status: 201, body: { ok: true } });
    await api.start();
    const flowFile = path.join(dir, 'flow.vague');
    fs.writeFileSync(flowFile, FLOW);
    const tickFile = path.join(dir, 'tick.vague');
    fs.writeFileSync(tickFile, TICK);
    const files: MissionFiles = { entry: flowFile, files: [{ path: flowFile, text: FLOW }] };

    const workers = ['machine-a', 'machine-b', 'machine-c'].map((host) => ({ host, proc: spawnWorker(host, dir, tickFile) }));
    const hooks = new Map<string, string>();
    for (const w of workers) {
      const url = await waitFor(`${w.host} to serve webhooks`, () => /^webhooks on (\S+)$/m.exec(w.proc.stdout())?.[1], 30_000);
      hooks.set(w.host, url);
    }

    log = await openLog(db.target);
    const env = createRealEnv(process.env);
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, (_, j) => startRun(files, { sources: { Api: api.url }, env: { N: `r${i + j}` } }, { log: log!, env, dataDir: path.join(dir, 'data-test') })),
      );
      for (const r of batch) {
        expect(r.status).toBe('suspended');
        runIds.push(r.runId);
      }
    }

    // kill -9 machine-a while it holds runs mid-way.
    const held = await waitFor(
      'machine-a to hold a run',
      async () => {
        const owned = (await log!.listRuns({ status: 'running' })).filter((r) => r.owner?.startsWith('machine-a:'));
        return owned.length > 0 ? owned.map((r) => r.runId) : undefined;
      },
      30_000,
      5,
    );
    workers[0]!.proc.child.kill('SIGKILL');
    await workers[0]!.proc.exited;

    // Every run reaches its webhook pause (machine-a's after their leases expire).
    await waitFor(
      `all ${RUNS} runs to wait for their approval`,
      async () => (await log!.listRuns({ status: 'suspended' })).filter((r) => r.mission === 'Flow' && r.wakeAt === null).length === RUNS,
      90_000,
      100,
    );
    const b = hooks.get('machine-b')!;
    const c = hooks.get('machine-c')!;
    for (let i = 0; i < RUNS; i++) {
      const res = await fetch(`${i % 2 === 0 ? b : c}/approve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-delivery-id': `approval-${i}` },
        body: JSON.stringify({ approval: i }),
      });
      expect(res.status).toBe(202);
      const body = (await res.json()) as { duplicate: boolean };
      expect(body.duplicate).toBe(false);
    }
    // A sender's resend, to the other machine: a duplicate, not a second approval.
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${i % 2 === 0 ? c : b}/approve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-delivery-id': `approval-${i}` },
        body: JSON.stringify({ approval: i }),
      });
      expect(await res.json()).toMatchObject({ duplicate: true });
    }
    await waitFor(
      `all ${RUNS} runs to complete`,
      async () => (await log!.listRuns({ status: 'completed' })).filter((r) => r.mission === 'Flow').length === RUNS,
      90_000,
      100,
    );
    for (const w of workers.slice(1)) w.proc.child.kill('SIGTERM');
    for (const w of workers.slice(1)) expect((await w.proc.exited).code, w.proc.stderr()).toBe(0);

    // Every Flow POST applied once: 3 per run, each key once.
    const flowKeys = [...api.applied.entries()].filter(([, n]) => n > 0);
    const effects = api.requests.filter((r) => r.url === '/effects');
    const keysOfEffects = new Set(effects.map((r) => String(r.headers['idempotency-key'])));
    expect(keysOfEffects.size).toBe(RUNS * 3);
    for (const key of keysOfEffects) expect(api.applied.get(key), key).toBe(1);
    expect(flowKeys.every(([, n]) => n === 1)).toBe(true);
    expect((await log.readTable('sql', 'flow_done')).map((r) => r.key).sort()).toEqual(Array.from({ length: RUNS }, (_, i) => `r${i}`).sort());

    // Each delivery claimed by exactly one run, each run claimed exactly one.
    const deliveries = (await log.allDeliveries()).filter((d) => d.path === '/approve');
    expect(deliveries).toHaveLength(RUNS);
    expect(new Set(deliveries.map((d) => d.claimedRun)).size).toBe(RUNS);
    expect(deliveries.every((d) => d.claimedRun !== null && runIds.includes(d.claimedRun))).toBe(true);

    // machine-a's runs were finished elsewhere, by a takeover.
    for (const runId of held) {
      expect((await log.getRun(runId))?.status).toBe('completed');
      const resumes = (await log.read(runId)).filter((e) => e.type === 'run.resumed').map((e) => (e.payload as { owner: string }).owner);
      expect(resumes.some((owner) => /^machine-[bc]:/.test(owner)), `${runId} resumed by ${resumes.join(', ')}`).toBe(true);
    }

    // The schedule: each firing instant once, one run each, each run's POST applied once.
    const firings = await log.scheduleFirings('Tick');
    expect(firings.length).toBeGreaterThan(3);
    expect(new Set(firings.map((f) => `${f.dueAt}:${f.attempt}`)).size).toBe(firings.length);
    const started = firings.filter((f) => f.outcome === 'started');
    expect(new Set(started.map((f) => f.runId)).size).toBe(started.length);
    const tickRuns = (await log.listRuns()).filter((r) => r.mission === 'Tick');
    expect(tickRuns.map((r) => r.runId).sort()).toEqual(started.map((f) => f.runId).sort());
    const tickKeys = new Set(api.requests.filter((r) => r.url === '/ticks').map((r) => String(r.headers['idempotency-key'])));
    for (const key of tickKeys) expect(api.applied.get(key)).toBe(1);
    const unfinished = tickRuns.filter((r) => r.status !== 'completed');
    // A firing started just before the workers stopped may be left running, never doubled.
    expect(unfinished.every((r) => r.status === 'running')).toBe(true);
    expect(tickKeys.size).toBeGreaterThanOrEqual(tickRuns.length - unfinished.length);
  }, 240_000);
});
