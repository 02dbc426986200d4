/**
 * The WAL's checkpoints off the main thread (engine/log/sqlite/wal-checkpointer.ts): under writes
 * that never pause the worker does them and the WAL stays bounded; the log closes with no WAL
 * left; a worker that cannot start or fails hands checkpoints back to SQLite; and a process killed
 * while its worker checkpoints loses no durable commit. SQLite only, by nature.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLog } from '../../engine/log/open-log.js';
import type { EventLog } from '../../engine/log/log.js';
import { CHECKPOINT_AT_FRAMES, WalCheckpointer } from '../../engine/log/sqlite/wal-checkpointer.js';
import { buildChild, type ChildBuild } from './build-child.js';
import { childJson, runChild } from './spawn-child.js';
import { newRun, tempDir } from './helpers.js';

const PAGE = 4096;
/** A WAL frame: its 24-byte header and one page. */
const FRAME = 24 + PAGE;
const FILLER = 'x'.repeat(3000);

let dir: string;
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** `runs` runs committing `each` 3 KB events each, all at once (so commits share groups). */
async function writeMany(log: EventLog, runs: number, each: number, walPath: string): Promise<number> {
  let largestWal = 0;
  await Promise.all(
    Array.from({ length: runs }, async (_, r) => {
      const { lease } = await log.createRun(newRun(`r${r}`), 'me', 600_000, []);
      for (let i = 0; i < each; i++) {
        await log.commit(lease, [{ kind: 'event', event: { type: 'value.recorded', stepPath: `s/${i}`, payload: { source: 'random', value: FILLER }, recordedAt: 1_000 } }], { durable: i % 50 === 0 });
        largestWal = Math.max(largestWal, fs.statSync(walPath, { throwIfNoEntry: false })?.size ?? 0);
      }
    }),
  );
  return largestWal;
}

async function eventually(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('checkpoints of the WAL off the main thread', () => {
  it('keeps the WAL bounded under writes that never pause, the worker doing the checkpoints, and closes with no WAL left', async () => {
    dir = tempDir();
    const dbPath = path.join(dir, 'log.db');
    const log = await openLog(dbPath, { debugChecks: false });
    // 10 runs × 1,200 events of 3 KB: about 12,000 frames, twelve times the threshold.
    const largestWal = await writeMany(log, 10, 1_200, `${dbPath}-wal`);
    await eventually('a checkpoint by the worker', () => (log.stats().walCheckpoints?.offMainThread ?? 0) > 0);
    // Without checkpoints the WAL would hold every frame written (≈ 50 MB); the main connection
    // checkpoints itself past four times the threshold, so the file never grows much beyond that.
    expect(largestWal).toBeLessThan(5 * CHECKPOINT_AT_FRAMES * FRAME);
    await log.close();
    expect(fs.existsSync(`${dbPath}-wal`), 'the main connection closed last and removed the WAL').toBe(false);
    const reopened = await openLog(dbPath);
    try {
      for (let r = 0; r < 10; r++) {
        const events = await reopened.read(`r${r}`);
        expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 1_200 }, (_, i) => i + 1));
      }
    } finally {
      await reopened.close();
    }
  }, 120_000);

  describe('a worker that cannot do them hands them back to SQLite', () => {
    const cases: [string, () => Worker][] = [
      [
        'cannot start',
        () => {
          throw new Error('worker threads are not available here');
        },
      ],
      [
        'fails its checkpoint',
        () =>
          new Worker(
            `const { parentPort } = require('node:worker_threads');
             parentPort.on('message', (m) => m === 'close' ? parentPort.close() : parentPort.postMessage({ ok: false, message: 'disk I/O error' }));`,
            { eval: true },
          ),
      ],
    ];
    it.each(cases)('a worker that %s', async (_, spawnWorker) => {
      dir = tempDir();
      const dbPath = path.join(dir, 'raw.db');
      const db = new Database(dbPath);
      try {
        db.pragma('journal_mode = WAL');
        db.exec('CREATE TABLE t (x BLOB)');
        const checkpointer = new WalCheckpointer(db, dbPath, spawnWorker);
        expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
        const insert = db.prepare('INSERT INTO t VALUES (randomblob(3000))');
        // Past the threshold: the worker is asked for, and fails.
        for (let i = 0; i < CHECKPOINT_AT_FRAMES + 50; i++) {
          insert.run();
          checkpointer.afterCommit();
        }
        await eventually("SQLite's autocheckpoint back on", () => db.pragma('wal_autocheckpoint', { simple: true }) === CHECKPOINT_AT_FRAMES);
        // And it works: SQLite checkpoints and restarts the WAL on its own from here.
        for (let i = 0; i < 3 * CHECKPOINT_AT_FRAMES; i++) insert.run();
        const [state] = db.pragma('wal_checkpoint(NOOP)') as { log: number }[];
        expect(state!.log).toBeLessThanOrEqual(CHECKPOINT_AT_FRAMES + 10);
        expect(checkpointer.checkpoints.offMainThread).toBe(0);
        // Said, in the log's stats, not silent.
        expect(checkpointer.checkpoints.fellBack).toMatch(/worker threads are not available here|disk I\/O error/);
        await checkpointer.close();
      } finally {
        db.close();
      }
    });
  });

  it('close() ends a worker that does not close its connection (a checkpoint stuck on slow storage), and a second close() waits for the first', async () => {
    dir = tempDir();
    const dbPath = path.join(dir, 'stuck.db');
    const db = new Database(dbPath);
    try {
      db.pragma('journal_mode = WAL');
      db.exec('CREATE TABLE t (x BLOB)');
      // Answers nothing, closes nothing: only terminate() ends it.
      const stuck = () => new Worker(`require('node:worker_threads').parentPort.on('message', () => {});`, { eval: true });
      const checkpointer = new WalCheckpointer(db, dbPath, stuck);
      const insert = db.prepare('INSERT INTO t VALUES (randomblob(3000))');
      for (let i = 0; i < CHECKPOINT_AT_FRAMES + 50; i++) {
        insert.run();
        checkpointer.afterCommit();
      }
      const started = Date.now();
      const first = checkpointer.close();
      const second = checkpointer.close();
      await second;
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_000);
      await first;
    } finally {
      db.close();
    }
  }, 30_000);

  describe('a process whose worker checkpointed', () => {
    let build: ChildBuild;
    beforeAll(() => {
      build = buildChild();
    });
    afterAll(() => build?.cleanup());

    it('a process with nothing else to do closes the log, its worker included, and ends', async () => {
      dir = tempDir();
      const result = await runChild(process.execPath, [build.script, 'write-close', path.join(dir, 'closed.db')]);
      // The worker is unreferenced while it works; closing it must not leave the process waiting on
      // nothing (it ended with close() unsettled and the CLI said it reached no outcome).
      expect(childJson<{ closed: boolean }>(result)).toEqual({ closed: true });
      expect(fs.existsSync(path.join(dir, 'closed.db-wal'))).toBe(false);
    }, 120_000);

    it('loses no durable commit, and the log opens whole', async () => {
      dir = tempDir();
      const dbPath = path.join(dir, 'killed.db');
      const child = spawn(process.execPath, [build.script, 'write-on', dbPath, '8'], { stdio: ['ignore', 'pipe', 'pipe'] });
      const durable = new Map<string, number>();
      let checkpoints = 0;
      let stderr = '';
      let buffered = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) {
          const [kind, a, b] = line.split(' ');
          if (kind === 'D') durable.set(a!, Number(b));
          if (kind === 'C') checkpoints = Number(a);
        }
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
      try {
        // Killed once its worker has answered three checkpoints, while it goes on writing: at no chosen point of a checkpoint.
        await eventually(`the child's off-thread checkpoints (stderr: ${stderr})`, () => checkpoints >= 3, 60_000);
      } finally {
        child.kill('SIGKILL');
      }
      expect(await exited).toBe('SIGKILL');
      expect(durable.size).toBe(8);
      const log = await openLog(dbPath);
      try {
        for (const [runId, seq] of durable) {
          const events = await log.read(runId);
          expect(events.length, `${runId}: every event up to its last durable commit (seq ${seq}) is there`).toBeGreaterThanOrEqual(seq);
          expect(events.map((e) => e.seq)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
          expect(events.every((e) => e.type === 'value.recorded')).toBe(true);
        }
      } finally {
        await log.close();
      }
    }, 120_000);
  });
});
