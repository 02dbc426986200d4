/**
 * A power cut in the middle of a whole run, simulated from the WAL.
 *
 * The log is opened with `walAutocheckpoint: 0`, so everything it writes goes to the WAL in order
 * and the database file stays as it was. A run of fixtures/ownership.vague (GET pages, then a
 * POST and a sql store write per record) executes in-process (startRun) against a real HTTP
 * server; after every call that fsync'd the log the WAL's size is noted, and when each POST
 * reaches the server the size at the last fsync before it is remembered. "The machine died just
 * after that request left" is then the database file plus the WAL cut at that size — everything
 * not fsync'd is lost, including the non-durable commits that came before the request — copied
 * into a fresh directory. The run is resumed from each such copy against the same server: every
 * effect is still applied exactly once (the resumed run repeats the idempotency keys), the final
 * stores equal the uninterrupted run's, and verify passes.
 * SQLite only, by nature: the cut is of a WAL file this process writes; PostgreSQL's WAL is the
 * server's, and a torn prefix of it is the server's crash recovery to undo, not the engine's.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { resumeRun, startRun } from '../../engine/executor/run-mission.js';
import { verifyRun } from '../../engine/executor/verify.js';
import type { StoredEvent } from '../../engine/log/events.js';
import type { EventLog, MissionFiles } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';
import type { FakeApi } from '../support/fake-api.js';
import { REPO } from './support/cli-build.js';
import { effectReport, ITEMS, startMissionApi } from './support/mission-api.js';

const MISSION = path.join(REPO, 'test/durability/fixtures/ownership.vague');
const TABLE = 'owned_out';

let dirs: string[] = [];
let api: FakeApi | undefined;

afterEach(async () => {
  await api?.stop();
  api = undefined;
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-power-loss-'));
  dirs.push(dir);
  return dir;
}

interface DurablePoint {
  walSize: number;
  fsyncs: number;
}

/** The log, noting the WAL's size after every call that fsync'd it. */
function noteFsyncs(log: EventLog, walPath: string, points: DurablePoint[]): EventLog {
  return new Proxy(log, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const before = target.stats().fsyncs;
        const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const after = target.stats().fsyncs;
        if (after > before) points.push({ walSize: fs.statSync(walPath).size, fsyncs: after });
        return result;
      };
    },
  });
}

/** An owner string naming a process of this host that has exited: a machine that rebooted. */
function deadOwner(): string {
  const child = spawnSync(process.execPath, ['-e', '']);
  return `${os.hostname()}:${child.pid}:before-the-power-cut`;
}

function storeOf(events: StoredEvent[]): { key: string; record: Record<string, unknown> }[] {
  return MemoryStoreState.fromEvents(events).list('out') as { key: string; record: Record<string, unknown> }[];
}

describe('power loss', () => {
  it('resumes from the WAL cut at the last fsync before an effect: every effect once, same stores, verify clean', async () => {
    api = await startMissionApi();
    const dir = tempDir();
    const dbPath = path.join(dir, 'reqon.db');
    const walPath = `${dbPath}-wal`;
    const points: DurablePoint[] = [];
    /** Per record id: the last durable point when its POST reached the server. */
    const atEffect = new Map<string, DurablePoint>();
    api.on('POST /effects', (req) => {
      const id = (req.body as { id: string }).id;
      if (!atEffect.has(id)) atEffect.set(id, points.at(-1)!);
      return { status: 201, body: { receipt: `r-${id}` } };
    });

    const files: MissionFiles = { entry: MISSION, files: [{ path: MISSION, text: fs.readFileSync(MISSION, 'utf8') }] };
    const raw = await openLog(dbPath, { walAutocheckpoint: 0 });
    const log = noteFsyncs(raw, walPath, points);
    const env = createRealEnv({});
    let runId: string;
    let original: StoredEvent[];
    let originalTable: { key: string; record: Record<string, unknown> }[];
    const copies: { id: string; cut: number; dir: string }[] = [];
    try {
      const result = await startRun(files, { sources: { Api: api.url }, env: {} }, { log, env, dataDir: path.join(dir, 'data'), owner: deadOwner() });
      expect(result.status).toBe('completed');
      runId = result.runId;
      original = await raw.read(runId);
      originalTable = await raw.readTable('sql', TABLE);
      expect(atEffect.size).toBe(ITEMS.length);
      // One fsync for the run's creation, one per POST intent, one for the completion.
      expect(raw.stats().fsyncs).toBe(1 + ITEMS.length + 1);

      // The cuts, taken while the original log is open (closing it would checkpoint the WAL):
      // just after the fsync before the first, a middle and the last effect, and for the middle
      // one also a torn write a little way into the next frame (as if part of it reached the disk).
      const middle = ITEMS[3]!.id;
      for (const [id, extra] of [[ITEMS[0]!.id, 0], [middle, 0], [middle, 1000], [ITEMS[6]!.id, 0]] as const) {
        const copyDir = tempDir();
        const cut = atEffect.get(id)!.walSize + extra;
        fs.copyFileSync(dbPath, path.join(copyDir, 'reqon.db'));
        fs.writeFileSync(path.join(copyDir, 'reqon.db-wal'), fs.readFileSync(walPath).subarray(0, cut));
        copies.push({ id, cut, dir: copyDir });
      }
      expect(fs.statSync(walPath).size).toBeGreaterThan(Math.max(...copies.map((c) => c.cut)));
    } finally {
      await env.http.close();
      await raw.close();
    }

    const applied = new Map(api.applied);
    for (const copy of copies) {
      const requestsBefore = api.requests.length;
      const copyLog = await openLog(path.join(copy.dir, 'reqon.db'));
      const copyEnv = createRealEnv({});
      try {
        // What survived: a clean prefix of the log that holds the intent of the chosen effect
        // (durable before its request) but not its outcome, and nothing after.
        const survived = await copyLog.read(runId);
        expect(survived.length).toBeLessThan(original.length);
        expect(survived).toEqual(original.slice(0, survived.length));
        const intent = survived.find((e) => e.type === 'http.request' && JSON.stringify(e.payload).includes(`"id":"${copy.id}"`));
        expect(intent, `the intent of the POST of ${copy.id} survived the power cut`).toBeDefined();
        const effectId = (intent!.payload as { effectId: string }).effectId;
        expect(survived.some((e) => e.type === 'http.response' && (e.payload as { effectId: string }).effectId === effectId)).toBe(false);
        expect((await copyLog.getRun(runId))?.status).toBe('running');

        const resumed = await resumeRun(runId, {}, { log: copyLog, env: copyEnv, dataDir: path.join(copy.dir, 'data') });
        expect(resumed.status).toBe('completed');
        const events = await copyLog.read(runId);
        expect(storeOf(events)).toEqual(storeOf(original));
        expect(await copyLog.readTable('sql', TABLE)).toEqual(originalTable);
        expect(events.filter((e) => e.type === 'run.resumed').map((e) => (e.payload as { reason: string }).reason)).toEqual(['crash']);
        const report = await verifyRun(copyLog, runId, { env: copyEnv });
        expect(report.divergence, JSON.stringify(report.divergence)).toBeNull();
        expect(report.ok).toBe(true);
      } finally {
        await copyEnv.http.close();
        await copyLog.close();
      }
      // The resumed run sent its requests again — same keys, so nothing was applied twice.
      expect(api.requests.length).toBeGreaterThan(requestsBefore);
      expect(api.applied).toEqual(applied);
    }

    const effects = effectReport(api);
    expect(effects.applied.size).toBe(ITEMS.length);
    expect([...effects.applied.values()].every((n) => n === 1)).toBe(true);
    for (const [key, bodies] of effects.bodies) {
      expect(bodies.length, `key ${key} was repeated by the resumed copies`).toBeGreaterThan(1);
      for (const body of bodies) expect(body).toEqual(bodies[0]);
    }
  });
});
