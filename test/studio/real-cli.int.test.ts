/**
 * The studio against the real `reqon` CLI and the demo: the demo mission runs against the demo
 * API (assets/demo), and the crash lab kills a run at `after-effect:3` with SIGKILL, resumes it
 * through the timer pause, and proves that its stores equal a crash-free run's and that every
 * confirmation POST was applied exactly once by the API's per-key counters.
 *
 * The CLI is compiled from source into a temp dir first (not dist/, which other builds share).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PushChannel } from '../../engine/protocol/protocol.js';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
// @ts-expect-error plain ESM JavaScript without type declarations
import { startDemoApi } from '../../assets/demo/demo-api.mjs';

const REPO = path.resolve(new URL('../..', import.meta.url).pathname);
const MISSION = path.join(REPO, 'assets', 'demo', 'orders.vague');

function buildCli(dir: string): string {
  const out = path.join(dir, 'out');
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: path.join(REPO, 'tsconfig.json'),
      compilerOptions: { rootDir: REPO, outDir: out, lib: ['ES2023'], types: ['node'], typeRoots: [path.join(REPO, 'node_modules/@types')], sourceMap: false },
      files: [path.join(REPO, 'engine/cli/main.ts')],
    }),
  );
  try {
    execFileSync(process.execPath, [path.join(REPO, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')], { stdio: 'pipe' });
  } catch (e) {
    // Type errors in modules other helpers are still writing do not stop the emit; a missing output does.
    if (!fs.existsSync(path.join(out, 'engine/cli/main.js'))) throw new Error(`compiling the CLI failed: ${String((e as { stdout?: Buffer }).stdout ?? e)}`);
  }
  fs.writeFileSync(path.join(out, 'package.json'), '{"type":"module"}');
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(out, 'node_modules'));
  return path.join(out, 'engine/cli/main.js');
}

interface DemoApi {
  url: string;
  stats(): { keys: Record<string, { requests: number; effects: number }> };
  close(): Promise<void>;
}

describe('studio with the real CLI and the demo', () => {
  let dir: string;
  let api: DemoApi;
  let service: StudioService;
  const pushes: { channel: PushChannel; payload: unknown }[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-studio-real-'));
    const cliPath = buildCli(dir);
    api = (await startDemoApi()) as DemoApi;
    service = await createStudioService({ dbPath: path.join(dir, 'reqon.db'), cliPath, cwd: dir, demoApiUrl: api.url, demoMissionPath: MISSION, pollIntervalMs: 50 });
    service.subscribe((channel, payload) => pushes.push({ channel, payload }));
  }, 120_000);

  afterAll(async () => {
    await service?.close();
    await api?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('survives a SIGKILL at after-effect:3 with equal stores and exactly-once effects', async () => {
    const started = await service.handle('crashlab.start', { missionPath: MISSION, sources: { Shop: api.url }, crashAt: 'after-effect:3' });
    const done = await service.labSettled(started.labId);
    expect(done.error).toBeNull();
    expect(done.processes[0]).toMatchObject({ command: 'run', signal: 'SIGKILL' });
    // The resume after the crash reaches the demo's 3 s pause; the studio's worker wakes it, not the lab.
    expect(done.processes.map((p) => `${p.command}:${p.signal ?? p.code}`)).toEqual(['run:SIGKILL', 'resume:10']);
    expect(done.verdict).toMatchObject({ ok: true, tested: true, storesEqual: true, duplicateEffects: 0, crashes: 1, finalStatus: 'completed' });
    expect(Object.fromEntries(done.verdict!.checks.map((c) => [c.name, c.ok]))).toEqual({ completed: true, stores: true, writes: true, requests: true, replay: true });
    expect(done.verdict!.effects).toHaveLength(7);
    for (const effect of done.verdict!.effects) expect(effect.effects).toBe(1);
    // The armed run's writes were answered by the lab's proxy: the demo API applied the reference run's 7, once each.
    const stats = (await (await fetch(`${api.url}/__stats`)).json()) as { keys: Record<string, { effects: number }> };
    expect(Object.values(stats.keys).map((k) => k.effects)).toEqual([1, 1, 1, 1, 1, 1, 1]);

    const summary = await service.handle('run.get', { runId: done.runId! });
    expect(summary).toMatchObject({ status: 'completed', crashesSurvived: 1 });
    const timeline = await service.handle('run.timeline', { runId: done.runId! });
    expect(timeline.markers.some((m) => m.kind === 'crash')).toBe(true);
    expect(timeline.markers.some((m) => m.kind === 'timer')).toBe(true);
    const state = await service.handle('run.stateAt', { runId: done.runId!, seq: summary.lastSeq });
    const orders = state.stores.find((s) => s.name === 'orders')!;
    expect(orders.kind).toBe('sql');
    expect(orders.records.map((r) => r.key)).toEqual(['o-1001', 'o-1002', 'o-1003', 'o-1004', 'o-1005', 'o-1006', 'o-1007']);
    expect(pushes.some((p) => p.channel === 'process.exited' && (p.payload as { signal: string | null }).signal === 'SIGKILL')).toBe(true);
    expect(pushes.some((p) => p.channel === 'crashlab.changed')).toBe(true);
  }, 120_000);

  it('offers the crash points a run of the demo reaches', async () => {
    const { runs } = await service.handle('runs.list', {});
    const points = await service.handle('crash.points', { runId: runs[0]!.runId });
    expect(points.map((p) => p.point)).toEqual(expect.arrayContaining(['before-effect', 'after-effect', 'mid-store', 'before-wait']));
    expect(points.find((p) => p.point === 'before-wait')!.occurrences).toBe(1);
  });

  it("a lab whose reference is a run another lab made forwards to that lab's API, not its proxy, gone with it", async () => {
    // Helper 65: such a run's --source names the first lab's proxy; inherited as it was, the new
    // lab forwarded to a closed port, and its reference run failed with 502.
    const first = await service.labSettled((await service.handle('crashlab.start', { missionPath: MISSION, sources: { Shop: api.url }, crashAt: 'after-effect:2' })).labId);
    expect(first.verdict?.ok, JSON.stringify(first)).toBe(true);
    const again = await service.labSettled((await service.handle('crashlab.start', { referenceRunId: first.referenceRunId!, crashAt: 'after-effect:2' })).labId);
    expect(again.error).toBeNull();
    expect(again.verdict).toMatchObject({ ok: true, tested: true, finalStatus: 'completed' });
  }, 90_000);

  it("a lab of a folder mission's run starts every file the run recorded, not its entry alone", async () => {
    // Helper 64: the Crash lab tab sent the entry file's text only, and the lab failed at once with E3036.
    const folder = path.join(dir, 'shop');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'mission.vague'), 'mission Shop {\n  source Shop { auth: none, base: "http://127.0.0.1:4010" }\n  store orders: sql("folder_orders")\n  run Sync\n}\n');
    fs.writeFileSync(path.join(folder, 'sync.vague'), 'action Sync {\n  get "/orders" { paginate: page(page, 3) }\n  store response -> orders { key: .id }\n}\n');
    const first = await service.handle('run.start', { missionPath: folder, sources: { Shop: api.url } });
    // The reference run's mission and sources, nothing else: what the tab sends.
    const started = await service.handle('crashlab.start', { referenceRunId: first.runId, crashAt: 'after-effect:2' });
    const done = await service.labSettled(started.labId);
    expect(done.error).toBeNull();
    expect(done.processes[0]).toMatchObject({ command: 'run', signal: 'SIGKILL' });
    expect(done.verdict).toMatchObject({ tested: true, storesEqual: true, finalStatus: 'completed' });
  }, 60_000);

  it("a lab of a run whose source reads an OpenAPI document lays the document out where the mission finds it", async () => {
    // Helper 65: the lab saved the recorded mission's text alone, and failed at once with E3057
    // (the document `from "../specs/shop.yaml"` was not beside it). One file here, its document a folder up.
    const home = path.join(dir, 'petshop', 'missions');
    fs.mkdirSync(home, { recursive: true });
    fs.mkdirSync(path.join(dir, 'petshop', 'specs'));
    fs.writeFileSync(
      path.join(dir, 'petshop', 'specs', 'shop.yaml'),
      `openapi: 3.0.3\ninfo: { title: Shop, version: 1.0.0 }\nservers: [ { url: "${api.url}" } ]\npaths:\n  /orders:\n    get: { operationId: listOrders, responses: { '200': { description: ok } } }\n`,
    );
    const entry = path.join(home, 'spec.vague');
    fs.writeFileSync(
      entry,
      'mission SpecShop {\n  source Shop from "../specs/shop.yaml" { auth: none }\n  store orders: sql("spec_orders")\n  action Sync {\n    call Shop.listOrders { paginate: page(page, 3) }\n    store response -> orders { key: .id }\n  }\n  run Sync\n}\n',
    );
    const first = await service.handle('run.start', { missionPath: entry, sources: { Shop: api.url } });
    for (let i = 0; i < 400 && (await service.handle('run.get', { runId: first.runId })).status !== 'completed'; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await service.handle('run.get', { runId: first.runId })).status).toBe('completed');
    // Moved away since: the lab must use what the run recorded, not the disk.
    fs.rmSync(path.join(dir, 'petshop'), { recursive: true });
    const started = await service.handle('crashlab.start', { referenceRunId: first.runId, crashAt: 'after-effect:2' });
    const done = await service.labSettled(started.labId);
    expect(done.error).toBeNull();
    expect(done.verdict).toMatchObject({ tested: true, storesEqual: true, finalStatus: 'completed' });
  }, 60_000);
});
