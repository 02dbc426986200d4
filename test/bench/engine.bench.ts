/**
 * Engine throughput against the physical limit of the disk that holds the database.
 *
 * The yardstick (1) is the raw fdatasync rate of small appends to a file in the bench folder;
 * every durable figure is also printed as a ratio to it. Then, with the REAL engine (startRun /
 * resumeRun, the SQLite log in a temp folder on the working directory's disk, a local HTTP server
 * on 127.0.0.1, the built code):
 *   (2) one sequential run: 10k `store` steps into a sql store; 2k POSTs
 *   (3) 100 concurrent runs of 10 effects each (group commit shares transactions and fsyncs)
 *   (4) resuming a suspended run with 100k events: events/s replayed and the time to resume
 *   (5) a 1M-record paginated sync (1k a page) in a child process: records/s and its peak RSS
 *   (6) pure steps (let, map, validate) per second, under `trace: full` and `trace: minimal`
 * Each run's outcome is checked (completed, every POST applied once, every record in its table)
 * so a fast but wrong engine shows up as a failure. Goals are printed in the unit column, never
 * asserted. REQON_BENCH_SCALE (default 1) scales every size, for a quick look;
 * REQON_BENCH_FIGURES (e.g. `4,6`) runs only the figures it lists (all by default).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { createRealEnv, type RealEnv } from '../../engine/env/real-env.js';
import { resumeRun, startRun, type EngineDeps, type RunResult } from '../../engine/executor/run-mission.js';
import { openLog, type EventLog } from '../../engine/log/log.js';
import type { BenchResult } from './bench-types.js';
import {
  benchDir,
  missionFiles,
  postMission,
  pureMission,
  PURE_STEPS_PER_ITERATION,
  replayMission,
  startBenchServer,
  storeMission,
  syncMission,
  type BenchServer,
} from './engine-fixtures.js';
import type { SyncChildReport } from './sync-child.js';

const SCALE = Number(process.env['REQON_BENCH_SCALE'] ?? '1');
const scaled = (n: number) => Math.max(1, Math.round(n * SCALE));

const STORE_RECORDS = scaled(10_000);
const POSTS = scaled(2_000);
const CONCURRENT_RUNS = 100;
const EFFECTS_PER_RUN = 10;
/** 4 events per iteration (loop.iteration, step.started, store.write, step.completed). */
const REPLAY_ITERATIONS = scaled(25_000);
const SYNC_RECORDS = scaled(1_000_000);
const SYNC_PAGE = 1_000;
const PURE_ITERATIONS = scaled(100_000);
const RAW_FSYNC_MS = 2_000;
const FIGURES = new Set((process.env['REQON_BENCH_FIGURES'] ?? '1,2,3,4,5,6').split(',').map((f) => f.trim()));
const wants = (figure: number) => FIGURES.has(String(figure));

export async function benchmarks(): Promise<BenchResult[]> {
  const dir = benchDir();
  process.stderr.write(`bench: engine logs in ${dir} (same filesystem as ${process.cwd()})\n`);
  const server = await startBenchServer(SYNC_RECORDS, SYNC_PAGE);
  const env = createRealEnv({});
  const out: BenchResult[] = [];
  try {
    // Figures 2 and 3 are ratios to the raw fsync rate, so they need figure 1.
    const fsyncs = wants(1) || wants(2) || wants(3) ? rawFsyncRate(dir) : NaN;
    if (wants(1)) out.push({ name: 'engine (1) raw fdatasync, small appends', value: fsyncs, unit: 'fsync/s' });

    const perRatio = (name: string, value: number, goal: string) => {
      out.push({ name, value, unit: 'effects/s' });
      out.push({ name: `${name} / raw fsync`, value: value / fsyncs, unit: `× raw fsync (${goal})` });
    };

    if (wants(2)) {
      perRatio('engine (2) 10k sql store steps, 1 run', await sequentialStores(dir, env, server), 'goal ≥ 0.8');
      perRatio('engine (2) 2k POSTs, 1 run', await sequentialPosts(dir, env, server), 'goal ≥ 0.8');
    }
    if (wants(3)) {
      perRatio('engine (3) sql store, 100 runs × 10', await concurrentRuns(dir, env, server, 'store'), 'goal ≥ 4, or ≥ 20k/s');
      perRatio('engine (3) POSTs, 100 runs × 10', await concurrentRuns(dir, env, server, 'post'), 'goal ≥ 4, or ≥ 20k/s');
    }

    if (wants(4)) {
      const replay = await replayResume(dir, env);
      out.push({ name: `engine (4) replay on resume (${replay.events} events)`, value: replay.eventsPerSecond, unit: 'events/s (goal ≥ 500k)' });
      out.push({ name: 'engine (4) time to resume', value: replay.ms, unit: 'ms' });
      out.push({ name: 'engine (4) time to build that run', value: replay.buildMs, unit: 'ms' });
    }

    if (wants(5)) {
      const sync = await paginatedSync(dir, server);
      out.push({ name: `engine (5) paginated sync (${SYNC_RECORDS} records)`, value: sync.recordsPerSecond, unit: 'records/s (goal ≥ 50k)' });
      out.push({ name: 'engine (5) sync peak RSS (child process)', value: sync.maxRssMb, unit: 'MB (goal < 300)' });
    }

    if (wants(6)) {
      for (const trace of ['full', 'minimal'] as const) {
        out.push({ name: `engine (6) pure steps (trace: ${trace})`, value: await pureSteps(dir, env, trace), unit: 'steps/s (goal ≥ 1M)' });
      }
    }
  } finally {
    await env.http.close();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** Appends 64 bytes and fdatasyncs, for RAW_FSYNC_MS: the most durable appends one writer can make. */
function rawFsyncRate(dir: string): number {
  const file = path.join(dir, 'raw-fsync.bin');
  const fd = fs.openSync(file, 'a');
  const chunk = Buffer.alloc(64, 0x61);
  try {
    for (let i = 0; i < 20; i++) {
      fs.writeSync(fd, chunk);
      fs.fdatasyncSync(fd);
    }
    let count = 0;
    const started = performance.now();
    let elapsed = 0;
    while ((elapsed = performance.now() - started) < RAW_FSYNC_MS) {
      fs.writeSync(fd, chunk);
      fs.fdatasyncSync(fd);
      count++;
    }
    return (count * 1000) / elapsed;
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
}

async function withLog<T>(dir: string, name: string, use: (log: EventLog, dbPath: string) => Promise<T>): Promise<T> {
  const dbPath = path.join(dir, `${name}.db`);
  const log = await openLog(dbPath, { debugChecks: false });
  try {
    return await use(log, dbPath);
  } finally {
    await log.close();
  }
}

function deps(log: EventLog, env: RealEnv, dir: string): EngineDeps {
  return { log, env, dataDir: path.join(dir, 'data') };
}

function expectCompleted(result: RunResult, what: string): void {
  if (result.status !== 'completed') {
    const why = result.status === 'failed' ? result.error.message : `suspended on ${result.waitingOn}`;
    throw new Error(`bench ${what}: the run ${result.runId} ended ${result.status} (${why}), expected completed`);
  }
}

function countRows(dbPath: string, table: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

async function sequentialStores(dir: string, env: RealEnv, server: BenchServer): Promise<number> {
  return withLog(dir, 'store-seq', async (log, dbPath) => {
    const files = missionFiles(dir, 'bench-store', storeMission(STORE_RECORDS));
    const started = performance.now();
    const result = await startRun(files, { sources: { Api: server.url }, env: {} }, deps(log, env, dir));
    const ms = performance.now() - started;
    expectCompleted(result, 'sql store steps');
    const rows = countRows(dbPath, 'bench_items');
    if (rows !== STORE_RECORDS) throw new Error(`bench sql store steps: ${rows} rows in bench_items, expected ${STORE_RECORDS}`);
    return (STORE_RECORDS * 1000) / ms;
  });
}

async function sequentialPosts(dir: string, env: RealEnv, server: BenchServer): Promise<number> {
  return withLog(dir, 'post-seq', async (log) => {
    const files = missionFiles(dir, 'bench-post', postMission(POSTS));
    const before = server.posts;
    const started = performance.now();
    const result = await startRun(files, { sources: { Api: server.url }, env: {} }, deps(log, env, dir));
    const ms = performance.now() - started;
    expectCompleted(result, 'POSTs');
    if (server.posts - before !== POSTS) throw new Error(`bench POSTs: the server got ${server.posts - before} POSTs, expected ${POSTS}`);
    return (POSTS * 1000) / ms;
  });
}

async function concurrentRuns(dir: string, env: RealEnv, server: BenchServer, kind: 'store' | 'post'): Promise<number> {
  return withLog(dir, `${kind}-concurrent`, async (log, dbPath) => {
    const files = missionFiles(dir, `bench-${kind}-c`, kind === 'store' ? storeMission(EFFECTS_PER_RUN) : postMission(EFFECTS_PER_RUN));
    const postsBefore = server.posts;
    const keysBefore = server.keys.size;
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: CONCURRENT_RUNS }, () => startRun(files, { sources: { Api: server.url }, env: {} }, deps(log, env, dir))),
    );
    const ms = performance.now() - started;
    for (const r of results) expectCompleted(r, `${kind} × ${CONCURRENT_RUNS} runs`);
    const total = CONCURRENT_RUNS * EFFECTS_PER_RUN;
    if (kind === 'post') {
      const posts = server.posts - postsBefore;
      const keys = server.keys.size - keysBefore;
      if (posts !== total || keys !== total) throw new Error(`bench concurrent POSTs: ${posts} POSTs with ${keys} distinct keys, expected ${total} of each`);
    } else {
      // Every run writes keys 0..9 of the same table: the table holds the last writes, the log all of them.
      const rows = countRows(dbPath, 'bench_items');
      if (rows !== EFFECTS_PER_RUN) throw new Error(`bench concurrent stores: ${rows} rows in bench_items, expected ${EFFECTS_PER_RUN}`);
      const writes = (await Promise.all(results.map((r) => log.read(r.runId)))).flat().filter((e) => e.type === 'store.write').length;
      if (writes !== total) throw new Error(`bench concurrent stores: ${writes} store.write events, expected ${total}`);
    }
    return (total * 1000) / ms;
  });
}

async function replayResume(dir: string, env: RealEnv): Promise<{ events: number; eventsPerSecond: number; ms: number; buildMs: number }> {
  return withLog(dir, 'replay', async (log) => {
    const files = missionFiles(dir, 'bench-replay', replayMission(REPLAY_ITERATIONS));
    const buildStarted = performance.now();
    const first = await startRun(files, { sources: {}, env: {} }, deps(log, env, dir));
    const buildMs = performance.now() - buildStarted;
    if (first.status !== 'suspended') throw new Error(`bench replay: the run ${first.runId} ended ${first.status}, expected suspended at its pause`);
    const events = (await log.getRun(first.runId))!.lastSeq;
    const started = performance.now();
    const resumed = await resumeRun(first.runId, { payload: { go: true }, by: 'api' }, deps(log, env, dir));
    const ms = performance.now() - started;
    expectCompleted(resumed, 'replay');
    return { events, eventsPerSecond: (events * 1000) / ms, ms, buildMs };
  });
}

async function paginatedSync(dir: string, server: BenchServer): Promise<{ recordsPerSecond: number; maxRssMb: number }> {
  const dbPath = path.join(dir, 'sync.db');
  const child = fileURLToPath(new URL('./sync-child.js', import.meta.url));
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [child, dbPath, server.url, path.join(dir, 'data'), String(SYNC_PAGE)], { maxBuffer: 1 << 20 }, (error, out, err) => {
      if (error) reject(new Error(`bench sync child failed: ${error.message}\n${err}`));
      else resolve(out);
    });
  });
  const report = JSON.parse(stdout.trim().split('\n').pop()!) as SyncChildReport;
  if (report.status !== 'completed') throw new Error(`bench sync: the run ended ${report.status}`);
  const rows = countRows(dbPath, 'bench_records');
  if (rows !== SYNC_RECORDS) throw new Error(`bench sync: ${rows} rows in bench_records, expected ${SYNC_RECORDS}`);
  return { recordsPerSecond: (SYNC_RECORDS * 1000) / report.ms, maxRssMb: report.maxRssBytes / (1024 * 1024) };
}

/** Pure steps per second under `trace`; checks the run completed and wrote the events that mode promises. */
async function pureSteps(dir: string, env: RealEnv, trace: 'full' | 'minimal'): Promise<number> {
  return withLog(dir, `pure-${trace}`, async (log) => {
    const files = missionFiles(dir, `bench-pure-${trace}`, pureMission(PURE_ITERATIONS, trace));
    const started = performance.now();
    const result = await startRun(files, { sources: {}, env: {} }, deps(log, env, dir));
    const ms = performance.now() - started;
    expectCompleted(result, `pure steps (trace: ${trace})`);
    const stepEvents = (await log.read(result.runId)).filter((e) => e.type === 'step.started').length;
    // full: the for step plus its three pure steps per iteration; minimal: none at all.
    const expected = trace === 'full' ? 1 + PURE_ITERATIONS * PURE_STEPS_PER_ITERATION : 0;
    if (stepEvents !== expected) throw new Error(`bench pure steps (trace: ${trace}): ${stepEvents} step.started events, expected ${expected}`);
    return (PURE_ITERATIONS * PURE_STEPS_PER_ITERATION * 1000) / ms;
  });
}
