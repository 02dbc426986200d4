/**
 * The studio's fork and bundle channels against the built CLI and real logs: `run.fork` starts a
 * `reqon fork` child whose run names its parent (RunSummary.forkedFrom) and whose effects after the
 * fork point reach a counting server once each under new keys; `run.export` hands out a bundle that
 * `run.import` opens in another studio's log, read-only (RunSummary.imported) with the same events
 * and a clean verify; a file that is no bundle is refused with a bad-request that says why.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { FakeApi } from '../support/fake-api.js';
import { builtCli, describeResult, runCli, runIdOf } from '../durability/support/cli-build.js';

const MISSION = `mission Shared {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: sql("shared_out")
  action Push {
    get "/things"
    for thing in response {
      post "/marks" { body: { id: thing.id } }
      store { id: thing.id, at: thing.at } -> out { key: .id }
    }
  }
  run Push
}
`;

let cli: string;
let dir: string;
let api: FakeApi;
let parentId: string;
const services: StudioService[] = [];

async function studio(db: string): Promise<StudioService> {
  const service = await createStudioService({ dbPath: db, cliPath: cli, cwd: dir, worker: false, pollIntervalMs: 50 });
  services.push(service);
  return service;
}

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-sharing-'));
  fs.writeFileSync(path.join(dir, 'shared.vague'), MISSION);
  api = new FakeApi();
  let n = 0;
  api.on('GET /things', () => ({ status: 200, body: ['a', 'b', 'c', 'd'].map((id) => ({ id, at: ++n })) }));
  api.on('POST /marks', { status: 201, body: { ok: true } });
  await api.start();
  const run = await runCli(cli, ['run', 'shared.vague', '--source', `Api=${api.url}`, '--db', path.join(dir, 'a.db'), '--quiet'], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
  expect(run.code, describeResult(run)).toBe(0);
  parentId = runIdOf(run);
}, 180_000);

afterAll(async () => {
  for (const s of services) await s.close();
  await api?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('studio: fork, export, import', () => {
  it('run.fork starts a fork that names its parent; its later effects are new, each once', async () => {
    const service = await studio(path.join(dir, 'a.db'));
    const parentEvents = await service.handle('run.events', { runId: parentId });
    const atSeq = parentEvents.filter((e) => e.type === 'store.write')[1]!.seq;
    const postsBefore = api.requests.filter((r) => r.method === 'POST').map((r) => String(r.headers['idempotency-key']));

    const { runId } = await service.handle('run.fork', { runId: parentId, atSeq });
    let fork = await service.handle('run.get', { runId });
    for (let i = 0; i < 100 && fork.status === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      fork = await service.handle('run.get', { runId });
    }
    expect(fork.status).toBe('completed');
    expect(fork.forkedFrom).toEqual({ runId: parentId, atSeq });
    expect((await service.handle('run.get', { runId: parentId })).forkedFrom).toBeUndefined();
    const after = api.requests.filter((r) => r.method === 'POST').slice(postsBefore.length);
    expect(after.map((r) => (r.body as { id: string }).id)).toEqual(['c', 'd']);
    for (const r of after) {
      expect(postsBefore).not.toContain(String(r.headers['idempotency-key']));
      expect(api.applied.get(String(r.headers['idempotency-key']))).toBe(1);
    }
    await expect(service.handle('run.fork', { runId: parentId, atSeq: 10_000 })).rejects.toMatchObject({ code: 'bad-request' });
    await expect(service.handle('run.fork', { runId: 'run-nope', atSeq: 1 })).rejects.toMatchObject({ code: 'not-found' });
  }, 60_000);

  it('run.export → run.import opens the run read-only in another log, every view working', async () => {
    const a = await studio(path.join(dir, 'a.db'));
    const b = await studio(path.join(dir, 'b.db'));
    const { fileName, text } = await a.handle('run.export', { runId: parentId });
    expect(fileName).toBe(`${parentId}.reqonrun`);
    const { runId } = await b.handle('run.import', { text });
    expect(runId).toBe(parentId);
    const summary = await b.handle('run.get', { runId });
    expect(summary).toMatchObject({ imported: true, status: 'completed' });
    expect(await b.handle('run.events', { runId })).toEqual(await a.handle('run.events', { runId }));
    const last = summary.lastSeq;
    expect(await b.handle('run.stateAt', { runId, seq: last })).toEqual(await a.handle('run.stateAt', { runId, seq: last }));
    expect(await b.handle('run.timeline', { runId })).toEqual(await a.handle('run.timeline', { runId }));
    const verify = await b.handle('run.verify', { runId });
    expect(verify.divergence ?? null).toBeNull();
    await expect(b.handle('run.import', { text })).rejects.toMatchObject({ code: 'conflict', message: `run ${runId} is already in this log: open it from the runs list (a bundle is imported once)` });
    // A bundle of a run that had not ended (exported while it ran, or killed): stopped, never "running".
    const bundle = JSON.parse(text) as { run: { status: string }; events: { type: string }[] };
    const cut = bundle.events.findIndex((e) => e.type === 'run.completed');
    expect(cut).toBeGreaterThan(1);
    const c = await studio(path.join(dir, 'c.db'));
    // Its status is the one it had then: a "completed" bundle that is cut is refused (run-bundle.int.test.ts).
    const { runId: cutId } = await c.handle('run.import', { text: JSON.stringify({ ...bundle, run: { ...bundle.run, status: 'running' }, events: bundle.events.slice(0, cut - 1) }) });
    expect(await c.handle('run.get', { runId: cutId })).toMatchObject({ imported: true, stopped: true });
    await expect(b.handle('run.import', { text: '{"hello": 1}' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/not a run bundle the studio can open: reqonRunBundle: expected 1/) });
  }, 60_000);
});
