/**
 * Engine throughput against the physical limit of the disk that holds the database.
 *
 * The yardstick (1) is the raw fdatasync rate of small appends to a file in the bench folder;
 * every durable figure is also printed as a ratio to it. Then, with the REAL engine (startRun /
 * resumeRun, the SQLite log in a temp folder on the working directory's disk, a local HTTP server
 * on 127.0.0.1 in a child process of its own, as a real API would be; the built code):
 *   (2) one sequential run: 10k `store` steps into a sql store; 2k POSTs
 *   (3) 100 concurrent runs of 10 effects each (group commit shares transactions and fsyncs)
 *   For the POSTs of (2) and (3), what they are made of is also measured alone, as references: the
 *   same round trips through the engine's HTTP transport with no log, and (2) durable log commits
 *   with no HTTP. A sequential POST cannot beat one of each in series (its intent must be on disk
 *   before it is sent), nor concurrent POSTs the transport alone; the ratios to them show what
 *   the engine itself adds.
 *   (4) resuming a suspended run with 100k events: events/s replayed and the time to resume, in
 *       a child process that times only `resumeRun` (not module loading, not opening the log):
 *       the median of 3 after an untimed warm-up resume (a worker's steady state), and one cold
 *       (a fresh process's first resume)
 *   (5) a 1M-record paginated sync (1k a page) in a child process: records/s and its peak RSS;
 *       then the same sync killed at 90 % (SIGKILL at a crash point) and resumed in a fresh
 *       process: the time to resume it to the end and that process's peak RSS
 *   (6) pure steps (let, map, validate) per second, under `trace: full` and `trace: minimal`
 *       (the median of 3 passes)
 *   (peers) the shapes DBOS and Restate are measured in, so figures can be set beside theirs:
 *       1 run × 1,000 sequential steps, 100 runs × 10 one after another, 100 runs × 10
 *       concurrent — each for sql store steps and for POSTs (median of 5 after 3 untimed passes)
 *   (growth) what the log costs as it grows: a log of 100k runs (1M effects), its size per event
 *       and per effect, and the CLI's and the studio's reads of it (growth.ts)
 *   (soak) REQON_BENCH_SOAK_MINUTES (default 10) of mixed runs (stores, POSTs, timers) at a steady
 *       rate through a worker: minute 1 against the last, for throughput, RSS, event-loop delay,
 *       the WAL (soak.ts)
 * Figures (2)–(6), (peers), (growth) and (soak) each run in a fresh child process of their own (engine-figure-child.ts), (6)
 * once per trace mode, so no figure inherits another's heap or JIT state.
 * (2), (3) and (peers) run again on PostgreSQL ('2:pg', '3:pg', 'peers:pg'): the same scenarios on the PostgreSQL log,
 * on a throwaway cluster the figure starts and stops (test/support/pg-cluster.ts; a database per
 * log), and with PostgreSQL's own physical limit measured in the same run as their yardstick: the
 * single-row commit rate, one INSERT per transaction with synchronous_commit = on. Without the
 * PostgreSQL binaries they are skipped, and the reason is printed.
 * Each run's outcome is checked (completed, every POST applied once, every record in its table)
 * so a fast but wrong engine shows up as a failure. Goals are printed in the unit column, never
 * asserted. REQON_BENCH_SCALE (default 1) scales every size, for a quick look;
 * REQON_BENCH_FIGURES (e.g. `4,6,peers`) runs only the figures it lists (all by default).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { createRealEnv, UndiciTransport, type RealEnv } from '../../engine/env/real-env.js';
import { resumeRun, startRun, type EngineDeps, type RunResult } from '../../engine/executor/run-mission.js';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { INSERT_BATCH, insertEventRows } from '../../engine/log/sqlite/statements.js';
import pg from 'pg';
import { findPgBin, startPgCluster } from '../support/pg-cluster.js';
import type { BenchResult } from './bench-types.js';
import { median } from './stats.js';
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
import { growthFigures } from './growth.js';
import { soakFigures } from './soak.js';
import type { SyncChildReport } from './sync-child.js';
import type { ReplayChildReport } from './replay-child.js';

const SCALE = Number(process.env['REQON_BENCH_SCALE'] ?? '1');
const scaled = (n: number) => Math.max(1, Math.round(n * SCALE));

const STORE_RECORDS = scaled(10_000);
const POSTS = scaled(2_000);
const CONCURRENT_RUNS = 100;
const EFFECTS_PER_RUN = 10;
/** Figure (3): timed passes (the median is printed), after CONCURRENT_WARM_UP_PASSES untimed ones. */
const CONCURRENT_PASSES = 5;
/**
 * Untimed passes before a figure that sends requests is timed. POSTs warm up slower than store
 * steps: both processes (the engine's HTTP path and the bench server) have to be compiled, and
 * measured here a sequential POST kept getting faster until its third pass of 2k (1,070 → 730 →
 * 550 → 415–490 µs), and 100 runs × 10 until about the eighth pass.
 */
const POST_WARM_UP_PASSES = 3;
/** Figure (2): rounds in which the sequential POSTs and their floors take turns (medians printed). */
const SEQUENTIAL_POST_ROUNDS = 3;
const CONCURRENT_WARM_UP_PASSES = 8;
/** 4 events per iteration (loop.iteration, step.started, store.write, step.completed). */
const REPLAY_ITERATIONS = scaled(25_000);
/** Warm resumes timed for figure (4), each in its own child process; the median is printed. */
const REPLAY_TRIALS = 3;
const SYNC_RECORDS = scaled(1_000_000);
const SYNC_PAGE = 1_000;
const PURE_ITERATIONS = scaled(100_000);
/** Figure (6): timed passes after the warm-up (the median is printed). */
const PURE_PASSES = 3;
const RAW_FSYNC_MS = 2_000;
const FIGURES = new Set((process.env['REQON_BENCH_FIGURES'] ?? '1,2,3,4,5,6,peers,growth,soak').split(',').map((f) => f.trim()));
const wants = (figure: number | string) => FIGURES.has(String(figure));
/** Figure (peers): untimed passes of each shape, then PEER_PASSES timed ones (the median is printed). */
const PEER_WARM_UP_PASSES = 3;
const PEER_PASSES = 5;
/**
 * The workload shapes DBOS and Restate are measured in (issue 17), so our figures can be set
 * beside theirs: the same number of durable steps, arranged three ways.
 */
const PEER_SHAPES: ReadonlyArray<RunsShape & { label: string }> = [
  { label: '1 run × 1,000 sequential', runs: 1, effects: scaled(1_000), concurrent: false },
  { label: '100 runs × 10, one after another', runs: 100, effects: 10, concurrent: false },
  { label: '100 runs × 10 concurrent', runs: 100, effects: 10, concurrent: true },
];
/**
 * Figures (2), (3) and (6) first run their scenario once, untimed, at full size ((2) and (6) on a
 * log of its own, (3) and (peers) on the log their timed passes use), so that what is timed is
 * the engine's steady state (hot paths compiled by the JIT, heap grown, connections made, as in a
 * long-running worker), not V8's warm-up: a tenth-size warm-up left (6) timing half of its first
 * full pass in V8's lower tiers.
 */
const warmUpSize = (n: number) => n;

/** What one figure process runs: a figure, and for (6) one trace mode. */
export type FigureTask = '2' | '3' | '2:pg' | '3:pg' | '4' | '5' | '6:full' | '6:minimal' | 'peers' | 'peers:pg' | 'growth' | 'soak';

/** Set in a PostgreSQL figure's process: the cluster's admin URL, on which withLog makes a database per log. */
let pgAdminUrl: string | undefined;

/**
 * Measures the raw fsync rate here, then runs every figure asked for in a fresh child process of
 * its own (engine-figure-child.ts): one figure's garbage and JIT state never slow or speed up
 * the next, and each pays its own warm-up.
 */
export async function benchmarks(): Promise<BenchResult[]> {
  const dir = benchDir();
  const out: BenchResult[] = [];
  let fsyncs = NaN;
  try {
    // Figures 2, 3 and peers are ratios to the raw fsync rate, so they need figure 1.
    if (wants(1) || wants(2) || wants(3) || wants('peers')) fsyncs = rawFsyncRate(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (wants(1)) out.push({ name: 'engine (1) raw fdatasync, small appends', value: fsyncs, unit: 'fsync/s' });
  const tasks: FigureTask[] = [];
  for (const figure of ['2', '3', '4', '5'] as const) if (wants(Number(figure))) tasks.push(figure);
  if (wants(6)) tasks.push('6:full', '6:minimal');
  if (wants('peers')) tasks.push('peers');
  if (wants('growth')) tasks.push('growth');
  if (wants('soak')) tasks.push('soak');
  if (wants(2) || wants(3) || wants('peers')) {
    const bin = findPgBin();
    if ('missing' in bin) process.stderr.write(`bench: engine figures (2), (3) and (peers) on PostgreSQL SKIPPED: ${bin.missing}\n`);
    else for (const figure of ['2', '3', 'peers'] as const) if (wants(figure)) tasks.push(`${figure}:pg`);
  }
  for (const task of tasks) out.push(...(await figureInChild(task, fsyncs)));
  return out;
}

async function figureInChild(task: FigureTask, fsyncs: number): Promise<BenchResult[]> {
  const child = fileURLToPath(new URL('./engine-figure-child.js', import.meta.url));
  const stdout = await new Promise<string>((resolve, reject) => {
    const proc = execFile(process.execPath, [child, task, String(fsyncs)], { maxBuffer: 1 << 20 }, (error, out) => {
      if (error) reject(new Error(`bench figure ${task} failed: ${error.message}`));
      else resolve(out);
    });
    proc.stderr?.pipe(process.stderr);
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as BenchResult[];
}

/** The figure `task`, in this process; `fsyncs` is the raw fsync rate the ratios divide by. */
export async function runFigure(task: FigureTask, fsyncs: number): Promise<BenchResult[]> {
  const dir = benchDir();
  process.stderr.write(`bench: engine figure ${task}, logs in ${dir} (same filesystem as ${process.cwd()})\n`);
  const server = await startBenchServer(SYNC_RECORDS, SYNC_PAGE);
  const env = createRealEnv({});
  const out: BenchResult[] = [];
  const is = (figure: number | string) => task.split(':')[0] === String(figure);
  const onPg = task.endsWith(':pg');
  const cluster = onPg ? await startPgCluster() : undefined;
  try {
    // On PostgreSQL the yardstick is PostgreSQL's own durable single-row commit rate, measured now.
    let yardstick = fsyncs;
    let limit = 'raw fsync';
    const tag = onPg ? ' [PostgreSQL]' : '';
    if (cluster) {
      pgAdminUrl = cluster.url;
      yardstick = await pgCommitRate(cluster.url);
      limit = 'PG commit';
      out.push({ name: `engine (${task.split(':')[0]}) [PostgreSQL] single-row commits, synchronous_commit = on`, value: yardstick, unit: 'commits/s (its physical limit here)' });
    }
    const perRatio = (name: string, value: number, goal: string) => {
      out.push({ name: `${name}${tag}`, value, unit: 'effects/s' });
      out.push({ name: `${name}${tag} / ${limit}`, value: value / yardstick, unit: `× ${limit} (${goal})` });
    };

    if (is(2)) {
      await sequentialStores(dir, env, server, warmUpSize(STORE_RECORDS), 'store-seq-warm-up');
      perRatio('engine (2) 10k sql store steps, 1 run', await sequentialStores(dir, env, server), onPg ? 'goal ≥ 3' : 'goal ≥ 0.8');
      // What a sequential POST is made of, without the engine: each part alone, then both in
      // series (a durable commit, then a round trip), which is the floor a POST stands on. In
      // series each part costs more than alone (measured here: both about 1.5–2×; the CPU idles
      // through every wait), so the floor is measured rather than summed.
      const parts = [
        { commit: false, trip: true, name: 'engine (2) reference: 2k POST round trips alone, 1 at a time', unit: "requests/s (the engine's HTTP transport, no log)" },
        { commit: true, trip: false, name: 'engine (2) reference: 2k durable log commits alone, 1 at a time', unit: 'commits/s (one event each, no HTTP)' },
        { commit: true, trip: true, name: 'engine (2) reference: 2k × (a durable commit, then a round trip)', unit: 'pairs/s (no engine: the floor of a sequential POST)' },
        // GUARANTEES 7 adds a commit of the answer as it arrives (non-durable, but its own round
        // trip to PostgreSQL) before the next step: the floor of a POST that keeps that promise.
        { commit: true, trip: true, answer: true, name: 'engine (2) reference: 2k × (a durable commit, a round trip, a non-durable commit)', unit: "triples/s (no engine: the floor of a sequential POST whose answer is committed as it arrives)" },
      ];
      for (let i = 0; i < POST_WARM_UP_PASSES; i++) await sequentialPosts(dir, env, server, warmUpSize(POSTS), `post-seq-warm-up-${i}`);
      for (const [k, part] of parts.entries()) {
        for (let i = 0; i < POST_WARM_UP_PASSES; i++) await commitsAndTrips(dir, server, POSTS, part, `parts-${k}-warm-up-${i}`);
      }
      // The engine and its floors take turns, SEQUENTIAL_POST_ROUNDS rounds: a ratio compares a
      // pass with the floor passes of its own round, so a load that comes and goes on this shared
      // machine falls on both sides of it (one pass of each, minutes apart, gave 0.30 × on one day
      // and 0.92 × on the next). Printed: the medians over the rounds.
      const rounds: { posts: number; floors: number[] }[] = [];
      for (let r = 0; r < SEQUENTIAL_POST_ROUNDS; r++) {
        const posts = await sequentialPosts(dir, env, server, POSTS, `post-seq-${r}`);
        const floors: number[] = [];
        for (const [k, part] of parts.entries()) floors[k] = await commitsAndTrips(dir, server, POSTS, part, `parts-${k}-${r}`);
        rounds.push({ posts, floors });
      }
      perRatio('engine (2) 2k POSTs, 1 run', median(rounds.map((r) => r.posts)), 'goal ≥ 0.8');
      for (const [k, part] of parts.entries()) out.push({ name: `${part.name}${tag}`, value: median(rounds.map((r) => r.floors[k]!)), unit: part.unit });
      out.push({ name: `engine (2) 2k POSTs, 1 run${tag} / that floor`, value: median(rounds.map((r) => r.posts / r.floors[2]!)), unit: `× (a durable commit, then a round trip; goal ≥ 0.8; median of ${SEQUENTIAL_POST_ROUNDS} rounds' ratios)` });
      out.push({ name: `engine (2) 2k POSTs, 1 run${tag} / the floor with the answer's commit`, value: median(rounds.map((r) => r.posts / r.floors[3]!)), unit: `× (a durable commit, a round trip, a non-durable commit; median of ${SEQUENTIAL_POST_ROUNDS} rounds' ratios)` });
    }
    if (is(3)) {
      // One pass is 1000 effects (tens of ms): too short to time once, and too short to warm the
      // JIT up in one go. Untimed passes, then the median of CONCURRENT_PASSES timed ones.
      for (const kind of ['store', 'post'] as const) {
        const timed = await concurrentPasses(dir, env, server, kind, `${kind}-concurrent`, CONCURRENT_SHAPE, CONCURRENT_WARM_UP_PASSES, CONCURRENT_PASSES);
        const middle = median(timed);
        const name = kind === 'store' ? 'engine (3) sql store, 100 runs × 10' : 'engine (3) POSTs, 100 runs × 10';
        perRatio(`${name} (median of ${CONCURRENT_PASSES})`, middle, onPg ? 'goal ≥ 10k/s' : 'goal ≥ 4, or ≥ 20k/s');
        if (kind === 'post') {
          // The ceiling of this machine for those POSTs without any engine: the same requests,
          // 100 senders of 10 each, through the engine's HTTP transport alone.
          const total = CONCURRENT_RUNS * EFFECTS_PER_RUN;
          for (let i = 0; i < CONCURRENT_WARM_UP_PASSES; i++) await roundTrips(server, total, CONCURRENT_RUNS);
          const trips: number[] = [];
          for (let i = 0; i < CONCURRENT_PASSES; i++) trips.push(await roundTrips(server, total, CONCURRENT_RUNS));
          const ceiling = median(trips);
          out.push({ name: `engine (3) reference: POST round trips alone, 100 senders × 10 (median of ${CONCURRENT_PASSES})${tag}`, value: ceiling, unit: "requests/s (the engine's HTTP transport, no log)" });
          out.push({ name: `engine (3) POSTs, 100 runs × 10${tag} / those round trips alone`, value: middle / ceiling, unit: '× the transport alone' });
        }
      }
    }

    if (is('peers')) {
      for (const kind of ['store', 'post'] as const) {
        for (const [k, shape] of PEER_SHAPES.entries()) {
          const timed = await concurrentPasses(dir, env, server, kind, `${kind}-peers-${k}`, shape, PEER_WARM_UP_PASSES, PEER_PASSES);
          const middle = median(timed);
          const what = kind === 'store' ? 'sql store steps' : 'POSTs';
          out.push({ name: `engine (peers) ${what}, ${shape.label}${tag} (median of ${PEER_PASSES})`, value: middle, unit: 'steps/s' });
          // The disk's limit in the same run, so a figure measured elsewhere (a peer's) can be scaled to this machine.
          out.push({ name: `engine (peers) ${what}, ${shape.label}${tag} / ${limit}`, value: middle / yardstick, unit: `× ${limit}` });
        }
      }
    }

    if (is('growth')) out.push(...(await growthFigures(dir, env, server, scaled)));
    if (is('soak')) out.push(...(await soakFigures(dir, env, server)));

    if (is(4)) {
      const replay = await replayResume(dir, env);
      out.push({ name: `engine (4) replay on resume (${replay.events} events)`, value: replay.eventsPerSecond, unit: 'events/s (goal ≥ 500k)' });
      out.push({ name: 'engine (4) time to resume', value: replay.ms, unit: 'ms (child process, warm; median of 3)' });
      out.push({ name: "engine (4) time to resume, a fresh process's first", value: replay.coldMs, unit: 'ms' });
      out.push({
        name: 'engine (4) replay on resume, every iteration walked again',
        value: (replay.events * 1000) / replay.walkedMs,
        unit: 'events/s (as under --crash-at or an edited mission; warm, one resume; goal ≥ 500k)',
      });
      out.push({
        name: 'engine (4) replay on resume, every iteration walked again, CPU',
        value: (replay.events * 1000) / replay.walkedCpuMs,
        unit: "events/s of the resume's CPU time (user + system), the same resume",
      });
      out.push({ name: 'engine (4) time to build that run', value: replay.buildMs, unit: 'ms' });
    }

    if (is(5)) {
      const sync = await paginatedSync(dir, server);
      out.push({ name: `engine (5) paginated sync (${SYNC_RECORDS} records)`, value: sync.recordsPerSecond, unit: 'records/s (goal ≥ 50k)' });
      out.push({ name: 'engine (5) sync peak RSS (child process)', value: sync.maxRssMb, unit: 'MB (goal < 300)' });
      const resumed = await killedSyncResumed(dir, server);
      out.push({ name: 'engine (5) that sync killed at 90 %: time to resume it to the end', value: resumed.ms, unit: 'ms' });
      out.push({ name: 'engine (5) that sync killed at 90 %: peak RSS of the resume', value: resumed.maxRssMb, unit: 'MB' });
      out.push({ name: `engine (5) reference: its last ${resumed.tailRecords} records synced fresh`, value: resumed.tailMs, unit: 'ms (a new run of them alone, in a copy of the killed log)' });
      out.push({ name: 'engine (5) that resume / those records synced fresh', value: resumed.ms / resumed.tailMs, unit: '× (goal ≤ 1.5)' });
    }

    if (is(6)) {
      const trace = task === '6:minimal' ? 'minimal' : 'full';
      await pureSteps(dir, env, trace, warmUpSize(PURE_ITERATIONS), `pure-${trace}-warm-up`);
      // One pass is a few hundred ms under minimal: a busy moment shows in one; the median of a few does not.
      const passes: number[] = [];
      for (let i = 0; i < PURE_PASSES; i++) passes.push(await pureSteps(dir, env, trace, PURE_ITERATIONS, `pure-${trace}-${i}`));
      const goal = trace === 'full' ? '500k' : '1M';
      out.push({ name: `engine (6) pure steps (trace: ${trace}, median of ${PURE_PASSES})`, value: median(passes), unit: `steps/s (goal ≥ ${goal})` });
      if (trace === 'full') {
        // What the events alone cost SQLite: the floor under this figure, whatever the engine does.
        const floor = await rawEventInserts(dir, env);
        out.push({ name: 'engine (6) reference: the same run\'s events inserted alone', value: floor.rowsPerSecond, unit: 'events/s (SQLite, no engine)' });
        const perStep = floor.events / (PURE_ITERATIONS * PURE_STEPS_PER_ITERATION);
        out.push({ name: 'engine (6) reference: pure steps/s those inserts allow', value: floor.rowsPerSecond / perStep, unit: `steps/s (${perStep.toFixed(2)} events a step)` });
        out.push({ name: 'engine (6) pure steps (trace: full) / what the inserts allow', value: median(passes) / (floor.rowsPerSecond / perStep), unit: '×' });
      }
    }
  } finally {
    await env.http.close();
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
    pgAdminUrl = undefined;
    cluster?.stop();
  }
  return out;
}

/** One-row INSERTs, each its own transaction, synchronous_commit = on, for RAW_FSYNC_MS: PostgreSQL's durable commit rate. */
async function pgCommitRate(adminUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query('SET synchronous_commit = on');
    await client.query('CREATE TABLE bench_commit_rate (n bigint)');
    for (let i = 0; i < 50; i++) await client.query('INSERT INTO bench_commit_rate VALUES ($1)', [i]);
    let count = 0;
    const started = performance.now();
    let elapsed = 0;
    while ((elapsed = performance.now() - started) < RAW_FSYNC_MS) {
      await client.query('INSERT INTO bench_commit_rate VALUES ($1)', [count++]);
    }
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM bench_commit_rate');
    if (Number(rows[0]!.n) !== count + 50) throw new Error(`bench PG commit rate: ${rows[0]!.n} rows, expected ${count + 50}`);
    await client.query('DROP TABLE bench_commit_rate');
    return (count * 1000) / elapsed;
  } finally {
    await client.end();
  }
}

/** Rows of a sql store table, read through the log when it is on PostgreSQL. */
async function tableRows(log: EventLog, dbPath: string, table: string): Promise<number> {
  return pgAdminUrl === undefined ? countRows(dbPath, table) : (await log.readTable('sql', table)).length;
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

/** One POST like the engine's to the bench server through `transport`; checks it was taken. */
async function postOnce(transport: UndiciTransport, server: BenchServer, key: string, n: number): Promise<void> {
  const res = await transport.send({
    method: 'POST',
    url: `${server.url}/things`,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Idempotency-Key': key },
    body: JSON.stringify({ n }),
    timeoutMs: 30_000,
  });
  if (res.status !== 201) throw new Error(`bench round trips: POST answered ${res.status}, expected 201`);
}

/**
 * `count` POSTs through the engine's own HTTP transport (UndiciTransport, as createRealEnv makes
 * it) and nothing else — no journal, no log — from `senders` concurrent loops; requests/s.
 */
async function roundTrips(server: BenchServer, count: number, senders: number): Promise<number> {
  const transport = new UndiciTransport();
  const before = (await server.stats()).posts;
  let next = 0;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: senders }, async () => {
        while (next < count) {
          const n = next++;
          await postOnce(transport, server, `bench-trip-${before}-${n}`, n);
        }
      }),
    );
  } finally {
    await transport.close();
  }
  const ms = performance.now() - started;
  const sent = (await server.stats()).posts - before;
  if (sent !== count) throw new Error(`bench round trips: the server got ${sent} POSTs, expected ${count}`);
  return (count * 1000) / ms;
}

/**
 * `count` times, one after another and without the engine: a durable commit of one small event
 * (on a log of its own) and/or a POST through the engine's HTTP transport; per second.
 */
async function commitsAndTrips(dir: string, server: BenchServer, count: number, parts: { commit: boolean; trip: boolean; answer?: boolean }, name: string): Promise<number> {
  return withLog(dir, name, async (log) => {
    const transport = new UndiciTransport();
    const run = { runId: `bench-${name}`, mission: 'BenchParts', missionHash: 'bench', missionFiles: { entry: 'bench.vague', files: [] }, options: { sources: {}, env: {} }, createdAt: Date.now() };
    const { lease } = await log.createRun(run, 'bench', 600_000, []);
    const before = (await server.stats()).posts;
    const started = performance.now();
    try {
      for (let i = 0; i < count; i++) {
        if (parts.commit) {
          const event = { type: 'step.started', stepPath: `Send/0[${i}]/0`, payload: { stepType: 'Fetch', line: 5 }, recordedAt: Date.now() } as const;
          await log.commit(lease, [{ kind: 'event', event }], { durable: true });
        }
        if (parts.trip) await postOnce(transport, server, `bench-${name}-${before}-${i}`, i);
        if (parts.answer) {
          const event = { type: 'step.completed', stepPath: `Send/0[${i}]/0`, payload: { stepType: 'Fetch' }, recordedAt: Date.now() } as const;
          await log.commit(lease, [{ kind: 'event', event }], { durable: false });
        }
      }
    } finally {
      await transport.close();
    }
    const ms = performance.now() - started;
    const committed = (await log.getRun(run.runId))?.lastSeq;
    const expected = (parts.commit ? count : 0) + (parts.answer ? count : 0);
    if (committed !== expected) throw new Error(`bench ${name}: the log holds ${committed} events, expected ${expected}`);
    const sent = (await server.stats()).posts - before;
    if (sent !== (parts.trip ? count : 0)) throw new Error(`bench ${name}: the server got ${sent} POSTs, expected ${parts.trip ? count : 0}`);
    return (count * 1000) / ms;
  });
}

async function withLog<T>(dir: string, name: string, use: (log: EventLog, dbPath: string) => Promise<T>): Promise<T> {
  const admin = pgAdminUrl;
  const database = `bench_${name.replace(/[^a-z0-9]/gi, '_').toLowerCase()}`;
  if (admin !== undefined) await pgAdmin(admin, `CREATE DATABASE ${database}`);
  const dbPath = admin === undefined ? path.join(dir, `${name}.db`) : admin.replace(/\/[^/]*$/, `/${database}`);
  const log = await openLog(dbPath, { debugChecks: false });
  try {
    return await use(log, dbPath);
  } finally {
    await log.close();
    if (admin !== undefined) await pgAdmin(admin, `DROP DATABASE ${database} WITH (FORCE)`);
  }
}

async function pgAdmin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
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

async function sequentialStores(dir: string, env: RealEnv, server: BenchServer, count = STORE_RECORDS, name = 'store-seq'): Promise<number> {
  return withLog(dir, name, async (log, dbPath) => {
    const files = missionFiles(dir, `bench-${name}`, storeMission(count));
    const started = performance.now();
    const result = await startRun(files, { sources: { Api: server.url }, env: {} }, deps(log, env, dir));
    const ms = performance.now() - started;
    expectCompleted(result, 'sql store steps');
    const rows = await tableRows(log, dbPath, 'bench_items');
    if (rows !== count) throw new Error(`bench sql store steps: ${rows} rows in bench_items, expected ${count}`);
    return (count * 1000) / ms;
  });
}

async function sequentialPosts(dir: string, env: RealEnv, server: BenchServer, count = POSTS, name = 'post-seq'): Promise<number> {
  return withLog(dir, name, async (log) => {
    const files = missionFiles(dir, `bench-${name}`, postMission(count));
    const before = (await server.stats()).posts;
    const started = performance.now();
    const result = await startRun(files, { sources: { Api: server.url }, env: {} }, deps(log, env, dir));
    const ms = performance.now() - started;
    expectCompleted(result, 'POSTs');
    const sent = (await server.stats()).posts - before;
    if (sent !== count) throw new Error(`bench POSTs: the server got ${sent} POSTs, expected ${count}`);
    return (count * 1000) / ms;
  });
}

/** How many runs of how many effects, started all at once or each after the previous ended. */
interface RunsShape {
  runs: number;
  effects: number;
  concurrent: boolean;
}

const CONCURRENT_SHAPE: RunsShape = { runs: CONCURRENT_RUNS, effects: EFFECTS_PER_RUN, concurrent: true };

/**
 * `warmUps` untimed passes, then `passes` timed ones (effects/s of each), all on ONE open log, as
 * a worker runs its runs: a log opened per pass timed its connections being made and, on
 * PostgreSQL, every statement being prepared again (a new session), which a worker pays once.
 */
async function concurrentPasses(
  dir: string,
  env: RealEnv,
  server: BenchServer,
  kind: 'store' | 'post',
  name: string,
  shape: RunsShape,
  warmUps: number,
  passes: number,
): Promise<number[]> {
  return withLog(dir, name, async (log, dbPath) => {
    for (let i = 0; i < warmUps; i++) await concurrentRuns(log, dbPath, dir, env, server, kind, shape);
    const timed: number[] = [];
    for (let i = 0; i < passes; i++) timed.push(await concurrentRuns(log, dbPath, dir, env, server, kind, shape));
    return timed;
  });
}

/** `shape.runs` runs of `shape.effects` effects each on `log`; effects/s over them all, each outcome checked. */
async function concurrentRuns(log: EventLog, dbPath: string, dir: string, env: RealEnv, server: BenchServer, kind: 'store' | 'post', shape: RunsShape): Promise<number> {
  const files = missionFiles(dir, `bench-${kind}-c`, kind === 'store' ? storeMission(shape.effects) : postMission(shape.effects));
  const before = await server.stats();
  const start = () => startRun(files, { sources: { Api: server.url }, env: {} }, deps(log, env, dir));
  const started = performance.now();
  const results: RunResult[] = [];
  if (shape.concurrent) results.push(...(await Promise.all(Array.from({ length: shape.runs }, start))));
  else for (let i = 0; i < shape.runs; i++) results.push(await start());
  const ms = performance.now() - started;
  for (const r of results) expectCompleted(r, `${kind} × ${shape.runs} runs`);
  const total = shape.runs * shape.effects;
  if (kind === 'post') {
    const after = await server.stats();
    const posts = after.posts - before.posts;
    const keys = after.keys - before.keys;
    if (posts !== total || keys !== total) throw new Error(`bench concurrent POSTs: ${posts} POSTs with ${keys} distinct keys, expected ${total} of each`);
  } else {
    // Every run writes keys 0..effects-1 of the same table: the table holds the last writes, the log all of them.
    const rows = await tableRows(log, dbPath, 'bench_items');
    if (rows !== shape.effects) throw new Error(`bench concurrent stores: ${rows} rows in bench_items, expected ${shape.effects}`);
    const writes = (await Promise.all(results.map((r) => log.read(r.runId)))).flat().filter((e) => e.type === 'store.write').length;
    if (writes !== total) throw new Error(`bench concurrent stores: ${writes} store.write events, expected ${total}`);
  }
  return (total * 1000) / ms;
}

/**
 * (4) Suspended runs of REPLAY_ITERATIONS iterations (and warm-up runs a tenth of that size) are
 * built here; each is resumed in a fresh child process (replay-child.ts) that times ONLY
 * `resumeRun` — not loading modules, not opening the log, not this process's dirty heap. One child
 * resumes cold (its first resume); REPLAY_TRIALS others first resume a warm-up run, untimed, as a
 * worker that has resumed runs before would have (the steady state figures 2, 3 and 6 also time),
 * and the figure is their median (one resume is a few hundred ms: a busy machine shows in one).
 */
async function replayResume(
  dir: string,
  env: RealEnv,
): Promise<{ events: number; eventsPerSecond: number; ms: number; coldMs: number; walkedMs: number; walkedCpuMs: number; buildMs: number }> {
  const dataDir = path.join(dir, 'data');
  const { dbPath, cold, trials, walked, buildMs } = await withLog(dir, 'replay', async (log, dbPath) => {
    const build = async (name: string, iterations: number): Promise<{ runId: string; ms: number }> => {
      const started = performance.now();
      const run = await startRun(missionFiles(dir, name, replayMission(iterations)), { sources: {}, env: {} }, deps(log, env, dir));
      const ms = performance.now() - started;
      if (run.status !== 'suspended') throw new Error(`bench replay: the run ${run.runId} ended ${run.status}, expected suspended at its pause`);
      return { runId: run.runId, ms };
    };
    const cold = await build('bench-replay-cold', REPLAY_ITERATIONS);
    const trial = async (name: string): Promise<{ runId: string; warmUp: string; ms: number }> => {
      const run = await build(`bench-replay-${name}`, REPLAY_ITERATIONS);
      return { ...run, warmUp: (await build(`bench-replay-warm-up-${name}`, warmUpSize(REPLAY_ITERATIONS))).runId };
    };
    const trials: { runId: string; warmUp: string; ms: number }[] = [];
    for (let i = 0; i < REPLAY_TRIALS; i++) trials.push(await trial(String(i)));
    return { dbPath, cold: cold.runId, trials, walked: await trial('walked'), buildMs: trials[0]!.ms };
  });
  const coldReport = await replayChild([dbPath, dataDir, cold]);
  const warm: ReplayChildReport[] = [];
  for (const t of trials) warm.push(await replayChild([dbPath, dataDir, t.runId, '--warm-up', t.warmUp]));
  const walkedReport = await replayChild([dbPath, dataDir, walked.runId, '--warm-up', walked.warmUp, '--walk-all']);
  // Every run stores ids 0… under `key: .id`: one row per id, whichever run wrote it.
  const rows = countRows(dbPath, 'bench_replay');
  if (rows !== REPLAY_ITERATIONS) throw new Error(`bench replay: ${rows} rows in bench_replay, expected ${REPLAY_ITERATIONS}`);
  const median = warm.sort((a, b) => a.ms - b.ms)[warm.length >> 1]!;
  return {
    events: median.events,
    eventsPerSecond: (median.events * 1000) / median.ms,
    ms: median.ms,
    coldMs: coldReport.ms,
    walkedMs: walkedReport.ms,
    walkedCpuMs: walkedReport.cpuMs,
    buildMs,
  };
}

async function replayChild(args: string[]): Promise<ReplayChildReport> {
  const child = fileURLToPath(new URL('./replay-child.js', import.meta.url));
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [child, ...args], { maxBuffer: 1 << 20 }, (error, out, err) => {
      if (error) reject(new Error(`bench replay child failed: ${error.message}\n${err}`));
      else resolve(out);
    });
  });
  const report = JSON.parse(stdout.trim().split('\n').pop()!) as ReplayChildReport;
  if (report.status !== 'completed') throw new Error(`bench replay: the resumed run ended ${report.status}, expected completed`);
  return report;
}

async function paginatedSync(dir: string, server: BenchServer): Promise<{ recordsPerSecond: number; maxRssMb: number }> {
  const dbPath = path.join(dir, 'sync.db');
  const report = syncReport(await syncChild([dbPath, server.url, path.join(dir, 'data'), String(SYNC_PAGE)]));
  if (report.status !== 'completed') throw new Error(`bench sync: the run ended ${report.status}`);
  checkSyncedRows(dbPath);
  return { recordsPerSecond: (SYNC_RECORDS * 1000) / report.ms, maxRssMb: report.maxRssBytes / (1024 * 1024) };
}

/**
 * The same sync killed (SIGKILL) while it stores its page at 90 %, then resumed in a fresh process;
 * and, as its yardstick, what is left of it synced fresh: a new run of the same mission over only
 * the records from the page it died in on (`/from/START/records`), in a copy of the killed log
 * taken before the resume — the same table, holding the same rows, as the resume found it.
 */
async function killedSyncResumed(dir: string, server: BenchServer): Promise<{ ms: number; maxRssMb: number; tailMs: number; tailRecords: number }> {
  const dbPath = path.join(dir, 'sync-killed.db');
  const args = [dbPath, server.url, path.join(dir, 'data'), String(SYNC_PAGE)];
  const killAt = Math.max(1, Math.round((SYNC_RECORDS / SYNC_PAGE) * 0.9));
  const killed = await syncChild([...args, '--kill-at', String(killAt)]).then(
    (out) => ({ out, signal: null }),
    (error: { out: string; signal: string | null }) => error,
  );
  if (killed.signal !== 'SIGKILL') throw new Error(`bench killed sync: expected the run to die of SIGKILL at page ${killAt}, got ${killed.signal}`);
  const runId = /^run (\S+)$/m.exec(killed.out)?.[1];
  if (!runId) throw new Error('bench killed sync: the child printed no run id');
  const tailPath = path.join(dir, 'sync-tail.db');
  for (const suffix of ['', '-wal', '-shm']) if (fs.existsSync(dbPath + suffix)) fs.copyFileSync(dbPath + suffix, tailPath + suffix);
  const report = syncReport(await syncChild([...args, '--resume', runId]));
  if (report.status !== 'completed') throw new Error(`bench killed sync: the resumed run ended ${report.status}`);
  checkSyncedRows(dbPath);
  // Each page commits at its end (over 512 events), so the resume goes on live from the page it died in.
  const tailStart = (killAt - 1) * SYNC_PAGE;
  const tail = syncReport(await syncChild([tailPath, `${server.url}/from/${tailStart}`, path.join(dir, 'data'), String(SYNC_PAGE)]));
  if (tail.status !== 'completed') throw new Error(`bench tail sync: the run ended ${tail.status}`);
  checkSyncedRows(tailPath);
  return { ms: report.ms, maxRssMb: report.maxRssBytes / (1024 * 1024), tailMs: tail.ms, tailRecords: SYNC_RECORDS - tailStart };
}

/** Runs sync-child.js; rejects with its output and signal when it does not exit cleanly. */
function syncChild(args: string[]): Promise<string> {
  const child = fileURLToPath(new URL('./sync-child.js', import.meta.url));
  return new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [child, ...args], { maxBuffer: 1 << 20 }, (error, out, err) => {
      if (error) reject(Object.assign(new Error(`bench sync child failed: ${error.message}\n${err}`), { out, signal: error.signal ?? null }));
      else resolve(out);
    });
  });
}

function syncReport(stdout: string): SyncChildReport {
  return JSON.parse(stdout.trim().split('\n').pop()!) as SyncChildReport;
}

function checkSyncedRows(dbPath: string): void {
  const rows = countRows(dbPath, 'bench_records');
  if (rows !== SYNC_RECORDS) throw new Error(`bench sync: ${rows} rows in bench_records of ${path.basename(dbPath)}, expected ${SYNC_RECORDS}`);
}

/**
 * The floor under figure (6) with `trace: full`: the events of one such run (read back from its
 * log, their payloads' JSON made beforehand) inserted into a fresh log's events table with
 * nothing else — the engine's multi-row statement and its pragmas, 1,008 rows a transaction, no
 * fsync — best of 3.
 */
async function rawEventInserts(dir: string, env: RealEnv): Promise<{ events: number; rowsPerSecond: number }> {
  const events = await withLog(dir, 'pure-floor-source', async (log) => {
    const files = missionFiles(dir, 'bench-pure-floor', pureMission(PURE_ITERATIONS, 'full'));
    const result = await startRun(files, { sources: {}, env: {} }, deps(log, env, dir));
    expectCompleted(result, 'pure steps (floor source)');
    return (await log.read(result.runId)).map((e) => ({ type: e.type, stepPath: e.stepPath, payload: JSON.stringify(e.payload), recordedAt: e.recordedAt }));
  });
  let best = 0;
  for (let pass = 0; pass < 3; pass++) {
    const file = path.join(dir, `pure-floor-${pass}.db`);
    await (await openLog(file, { debugChecks: false })).close(); // the log's own schema
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      const batch = INSERT_BATCH;
      const insert = insertEventRows(db, batch);
      const values = new Array<string | number>(batch * 6);
      const started = performance.now();
      const group = db.transaction((from: number, to: number) => {
        for (let i = from; i + batch <= to; i += batch) {
          for (let k = 0; k < batch; k++) {
            const e = events[i + k]!;
            const at = k * 6;
            values[at] = 'run_floor';
            values[at + 1] = i + k + 1;
            values[at + 2] = e.type;
            values[at + 3] = e.stepPath;
            values[at + 4] = e.payload;
            values[at + 5] = e.recordedAt;
          }
          insert.run(...values);
        }
      });
      const whole = events.length - (events.length % batch);
      const perTransaction = batch * 63;
      for (let i = 0; i < whole; i += perTransaction) group(i, Math.min(whole, i + perTransaction));
      best = Math.max(best, (whole * 1000) / (performance.now() - started));
    } finally {
      db.close();
    }
  }
  return { events: events.length, rowsPerSecond: best };
}

/** Pure steps per second under `trace`; checks the run completed and wrote the events that mode promises. */
async function pureSteps(dir: string, env: RealEnv, trace: 'full' | 'minimal', iterations = PURE_ITERATIONS, name = `pure-${trace}`): Promise<number> {
  return withLog(dir, name, async (log) => {
    const files = missionFiles(dir, `bench-${name}`, pureMission(iterations, trace));
    const started = performance.now();
    const result = await startRun(files, { sources: {}, env: {} }, deps(log, env, dir));
    const ms = performance.now() - started;
    expectCompleted(result, `pure steps (trace: ${trace})`);
    const stepEvents = (await log.read(result.runId)).filter((e) => e.type === 'step.started').length;
    // full: the for step plus its three pure steps per iteration; minimal: none at all.
    const expected = trace === 'full' ? 1 + iterations * PURE_STEPS_PER_ITERATION : 0;
    if (stepEvents !== expected) throw new Error(`bench pure steps (trace: ${trace}): ${stepEvents} step.started events, expected ${expected}`);
    return (iterations * PURE_STEPS_PER_ITERATION * 1000) / ms;
  });
}
