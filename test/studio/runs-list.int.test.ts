/**
 * `runs.list` pages, filters and counts on the engine side, on both backends: a log of 450 runs
 * written through the log API (three missions, every status, completed runs with and without
 * failed steps, start instants shared by several runs) is paged through with every filter, and
 * each page must equal the same slice of a reference built from every run's full view (`run.get`,
 * the fold of all its events) filtered and ordered in JavaScript. The summaries of listed runs
 * come from the log's counts before any run is opened, and from the views after: both are checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../engine/log/events.js';
import type { CommitEntry, EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import type { RunsListRequest, RunSummary } from '../../engine/protocol/protocol.js';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { backends, tempLogTarget, type Backend, type TempLogTarget } from '../support/temp-log.js';
import path from 'node:path';

const RUNS = 450;
const MISSIONS = ['Orders', 'Billing', 'ÉmileSync'];

const event = <T extends NewEvent['type']>(type: T, stepPath: string, payload: unknown, recordedAt: number): CommitEntry => ({ kind: 'event', event: { type, stepPath, payload, recordedAt } as NewEvent });

/** Run i: its mission, start instant (every third shares its neighbour's), and how it ends. */
async function seed(log: EventLog): Promise<void> {
  for (let i = 0; i < RUNS; i++) {
    const runId = `run-${String((i * 7919) % 1000).padStart(4, '0')}-${i}`;
    const mission = MISSIONS[i % 3]!;
    const at = 1_700_000_000_000 + Math.floor(i / 3) * 1000;
    const { lease } = await log.createRun(
      { runId, mission, missionHash: 'h', missionFiles: { entry: 'm.vague', files: [{ path: 'm.vague', text: `mission ${mission} {}` }] }, options: { sources: {}, env: {} }, createdAt: at },
      'seeder',
      600_000,
      [{ type: 'run.started', stepPath: '', payload: { mission, missionHash: 'h' }, recordedAt: at }],
    );
    const entries: CommitEntry[] = [];
    for (let s = 0; s < i % 5; s++) entries.push(event('step.completed', `A/${s}`, { stepType: 'let' }, at + 10 + s));
    if (i % 4 === 1) entries.push(event('step.failed', 'A/9', { stepType: 'post', error: { code: 'http-status', message: `422 for ${i}` } }, at + 50));
    const kind = i % 6;
    if (kind === 0 || kind === 1 || kind === 2) {
      entries.push(event('run.completed', '', { actionsRun: ['A'] }, at + 90));
      await log.commit(lease, entries, { durable: false, status: { status: 'completed', releaseLease: true } });
    } else if (kind === 3) {
      entries.push(event('run.failed', '', { error: { code: 'x', message: 'boom' } }, at + 90));
      await log.commit(lease, entries, { durable: false, status: { status: 'failed', releaseLease: true } });
    } else if (kind === 4) {
      entries.push(event('pause.created', 'A/8', { pauseId: `p${i}`, dueAt: at + 60_000 }, at + 80), event('run.suspended', '', { reason: 'timer', dueAt: at + 60_000 }, at + 81));
      await log.commit(lease, entries, { durable: false, status: { status: 'suspended', wakeAt: at + 60_000, waitingOn: `pause:p${i}`, releaseLease: true } });
    } else {
      await log.commit(lease, entries, { durable: false });
    }
  }
}

/** The status the table's filter sees (StatusBadge.statusOf). */
const shownStatus = (r: RunSummary) => (r.status === 'completed' && r.failures > 0 ? 'completed-with-failures' : r.status);

/** The reference: every run's full summary, filtered and ordered as runs.list must. */
function reference(all: RunSummary[], req: RunsListRequest): RunSummary[] {
  const needle = req.text?.trim().toLowerCase();
  const picked = all.filter((r) => (req.status === undefined || shownStatus(r) === req.status) && (!needle || r.mission.toLowerCase().includes(needle) || r.runId.toLowerCase().includes(needle)));
  picked.sort((a, b) => b.startedAt - a.startedAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
  return req.oldestFirst ? picked.reverse() : picked;
}

const QUERIES: RunsListRequest[] = [
  {},
  { oldestFirst: true },
  { status: 'completed' },
  { status: 'completed-with-failures' },
  { status: 'failed' },
  { status: 'suspended', oldestFirst: true },
  { status: 'running' },
  { text: 'billing' },
  { text: '  ORDERS ' },
  { text: 'mileSYNC', status: 'completed-with-failures' },
  { text: 'run-0' },
  { text: 'no such run' },
];

describe.each(backends)('%s: runs.list', (backend: Backend) => {
  let target: TempLogTarget;
  let service: StudioService;

  beforeAll(async () => {
    target = await tempLogTarget(backend, 'reqon-runs-list-');
    const log = await openLog(target.target);
    try {
      await seed(log);
    } finally {
      await log.close();
    }
    service = await createStudioService({ dbPath: target.target, cliPath: path.join(__dirname, 'fixtures', 'fake-cli.mjs'), cwd: target.dir, worker: false, prefetchRuns: 0 });
  }, 120_000);

  afterAll(async () => {
    await service?.close();
    await target?.drop();
  });

  /** Every page of `req`, `limit` at a time, concatenated; each page's total checked. */
  async function allPages(req: RunsListRequest, limit: number): Promise<{ runs: RunSummary[]; total: number }> {
    const first = await service.handle('runs.list', { ...req, limit });
    const runs = [...first.runs];
    while (runs.length < first.total) {
      const page = await service.handle('runs.list', { ...req, limit, offset: runs.length });
      expect(page.total).toBe(first.total);
      if (page.runs.length === 0) break;
      runs.push(...page.runs);
    }
    return { runs, total: first.total };
  }

  /** A summary without when it was composed (each answer is composed anew). */
  const unstamped = ({ composedAt: _, ...summary }: RunSummary) => summary;

  it('pages through every filter exactly as the full folds say, from counts and then from views', async () => {
    const counted = new Map<string, { runs: RunSummary[]; total: number }>();
    for (const req of QUERIES) counted.set(JSON.stringify(req), await allPages(req, 64));
    // Now the reference: every run opened, folded from all its events.
    const ids = (await allPages({}, 200)).runs.map((r) => r.runId);
    expect(new Set(ids).size).toBe(RUNS);
    const all = await Promise.all(ids.map((runId) => service.handle('run.get', { runId })));
    for (const req of QUERIES) {
      const expected = reference(all, req);
      const fromCounts = counted.get(JSON.stringify(req))!;
      expect(fromCounts.total, JSON.stringify(req)).toBe(expected.length);
      expect(fromCounts.runs.map(unstamped), JSON.stringify(req)).toEqual(expected.map(unstamped));
      // The views are held now: the list takes their summaries, which must say the same.
      expect((await allPages(req, 97)).runs.map(unstamped), JSON.stringify(req)).toEqual(expected.map(unstamped));
    }
    // The filters did split the log: each status is there, and failures tell two kinds of completed runs apart.
    for (const status of ['completed', 'completed-with-failures', 'failed', 'suspended', 'running']) expect(reference(all, { status: status as RunsListRequest['status'] }).length).toBeGreaterThan(10);
  }, 120_000);

  it('answers a page past the end with no runs and the total', async () => {
    expect(await service.handle('runs.list', { offset: RUNS + 5 })).toEqual({ runs: [], total: RUNS });
    const last = await service.handle('runs.list', { offset: RUNS - 3, limit: 200 });
    expect(last.runs).toHaveLength(3);
  });

  it('takes at most 1,000 runs a page, 200 without a limit', async () => {
    expect((await service.handle('runs.list', {})).runs).toHaveLength(200);
    expect((await service.handle('runs.list', { limit: 5_000 })).runs).toHaveLength(RUNS);
  });
});
