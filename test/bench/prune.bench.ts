/**
 * Retention's rate (issue 17): `reqon prune`'s work (engine/log/prune.ts) on a SQLite log of
 * PRUNE_RUNS finished runs of PRUNE_EVENTS events each, half of them old enough to go, while a
 * "worker" in the same process keeps committing one event at a time to a live run:
 * - runs/s and events/s pruned (wall time of pruneLog, space report included);
 * - the longest a concurrent commit waited during the prune, and the same before it (the
 *   baseline), so a prune that held the write lock or the event loop for long would show;
 * - the file's size and free space after, in MiB.
 * On SQLite, and on PostgreSQL on a throwaway cluster the figure starts and stops (skipped,
 * saying why, without the PostgreSQL binaries). Printed, never asserted.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchResult } from './bench-types.js';
import type { CommitEntry, EventLog, Lease } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { pruneLog } from '../../engine/log/prune.js';
import { findPgBin, startPgCluster } from '../support/pg-cluster.js';

const RUNS = Number(process.env['REQON_BENCH_PRUNE_RUNS'] ?? 2_000);
const EVENTS = Number(process.env['REQON_BENCH_PRUNE_EVENTS'] ?? 200);
const OLD_AT = 1_000;
const NEW_AT = 1_000_000;

function valueEntry(i: number, at: number): CommitEntry {
  return { kind: 'event', event: { type: 'value.recorded', stepPath: `main/${i % 7}`, payload: { source: 'random', value: { i, pad: 'x'.repeat(120) } }, recordedAt: at } };
}

async function fill(log: EventLog): Promise<void> {
  for (let r = 0; r < RUNS; r++) {
    const at = r % 2 === 0 ? OLD_AT : NEW_AT;
    const runId = `bench-${String(r).padStart(6, '0')}`;
    const { lease } = await log.createRun(
      { runId, mission: 'bench.vague', missionHash: 'h', missionFiles: { entry: 'bench.vague', files: [{ path: 'bench.vague', text: 'mission bench {}' }] }, options: { sources: {}, env: {} }, createdAt: at },
      'bench',
      3_600_000,
      [{ type: 'run.started', stepPath: '', payload: { mission: 'bench.vague', missionHash: 'h' }, recordedAt: at }],
    );
    const entries = Array.from({ length: EVENTS - 2 }, (_, i) => valueEntry(i, at));
    entries.push({ kind: 'event', event: { type: 'run.completed', stepPath: '', payload: { actionsRun: ['Main'] }, recordedAt: at } });
    await log.commit(lease, entries, { durable: false, returnEvents: false, status: { status: 'completed', releaseLease: true } });
  }
}

/** Commits one event at a time to a live run until stopped; the longest commit, in ms. */
function committer(log: EventLog, lease: Lease): { stop: () => Promise<number> } {
  let running = true;
  let longest = 0;
  const done = (async () => {
    for (let i = 0; running; i++) {
      const t0 = performance.now();
      await log.commit(lease, [valueEntry(i, NEW_AT)], { durable: false, returnEvents: false });
      longest = Math.max(longest, performance.now() - t0);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return longest;
    },
  };
}

export async function benchmarks(): Promise<BenchResult[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-bench-prune-'));
  try {
    const out = await measure(path.join(dir, 'reqon.db'), 'SQLite');
    const bin = findPgBin();
    if ('missing' in bin) {
      process.stderr.write(`bench: prune on PostgreSQL SKIPPED: ${bin.missing}\n`);
      return out;
    }
    const cluster = await startPgCluster();
    try {
      return [...out, ...(await measure(cluster.url, 'PostgreSQL'))];
    } finally {
      cluster.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(target: string, backend: string): Promise<BenchResult[]> {
  const log = await openLog(target);
  try {
    await fill(log);
    const { lease } = await log.createRun(
      { runId: 'live', mission: 'bench.vague', missionHash: 'h', missionFiles: { entry: 'bench.vague', files: [] }, options: { sources: {}, env: {} }, createdAt: NEW_AT },
      'bench',
      3_600_000_000,
      [{ type: 'run.started', stepPath: '', payload: { mission: 'bench.vague', missionHash: 'h' }, recordedAt: NEW_AT }],
    );
    // Baseline: the same committer for a second with no prune.
    const idle = committer(log, lease);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const baseline = await idle.stop();

    const busy = committer(log, lease);
    const t0 = performance.now();
    const summary = await pruneLog(log, { finishedBefore: NEW_AT, now: () => NEW_AT });
    const seconds = (performance.now() - t0) / 1000;
    const during = await busy.stop();
    if (summary.runs !== RUNS / 2) throw new Error(`prune bench: pruned ${summary.runs} runs, expected ${RUNS / 2}`);
    const space = summary.space!;
    const tag = backend === 'SQLite' ? '' : ` [${backend}]`;
    const out: BenchResult[] = [
      { name: `prune: runs pruned (${RUNS / 2} of ${RUNS} runs × ${EVENTS} events, ${backend}, a run committing meanwhile)`, value: summary.runs / seconds, unit: 'runs/s' },
      { name: `prune: events pruned${tag}`, value: summary.events / seconds, unit: 'events/s' },
      { name: `prune: longest wait of a concurrent commit during the prune${tag}`, value: during, unit: 'ms' },
      { name: `prune: longest wait of the same commits with no prune (baseline)${tag}`, value: baseline, unit: 'ms' },
      { name: `prune: log after the prune${tag}`, value: space.storedBytes / 1048576, unit: 'MiB' },
    ];
    if (space.freeBytes !== null) out.push({ name: `prune: of it free after the prune (reused by new writes)${tag}`, value: space.freeBytes / 1048576, unit: 'MiB' });
    return out;
  } finally {
    await log.close();
  }
}
