/**
 * A crash before, inside and after a `delete S[k]` (sql, file and memory stores), then resume:
 * the record is removed once, the other records stay, the run ends as a crash-free one does.
 * The crash points are the store batch's (journal/effects.ts): a delete is a one-write batch, so
 * each delete's own ordinal of each point is armed — found from a crash-free run's log, the way
 * the studio's crash-point fold counts them (passesRecordedBy). The built CLI is SIGKILLed there.
 * On each log backend ($REQON_TEST_BACKENDS), a fresh log database per run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrashPoint } from '../../engine/journal/effects.js';
import { passesRecordedBy } from '../../engine/journal/effects.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { FakeApi } from '../support/fake-api.js';
import { builtCli, describeResult, REPO, runCli, runIdOf } from './support/cli-build.js';
import { readRunFacts } from './support/run-facts.js';
import { backends, tempLogTarget, type Backend } from '../support/temp-log.js';

const MISSION = path.join(REPO, 'test/durability/fixtures/store-delete/prune.vague');
const ITEMS = [1, 2, 3, 4, 5].map((id) => ({ id, name: `item ${id}` }));

let cli: string;
let api: FakeApi;
let root: string;

beforeAll(async () => {
  cli = builtCli();
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-delete-crash-'));
  api = new FakeApi();
  api.on('GET /items', { body: ITEMS });
  api.on('POST /seen', { status: 201, body: {} });
  await api.start();
}, 180_000);

afterAll(async () => {
  await api?.stop();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

interface Outcome {
  killed: boolean;
  events: StoredEvent[];
  table: { key: string; record: Record<string, unknown> }[];
  fileKeys: string[];
  seen: Record<string, unknown[]>;
}

/** Runs the mission armed with `crashAt`, then resumes it unarmed until it ends. */
async function runToEnd(backend: Backend, name: string, crashAt?: string): Promise<Outcome> {
  const dir = path.join(root, `${backend}-${name}`);
  fs.mkdirSync(dir);
  const target = await tempLogTarget(backend, 'reqon-delete-crash-log-');
  try {
    return await runIn(dir, target.target, crashAt);
  } finally {
    await target.drop();
  }
}

async function runIn(dir: string, db: string, crashAt?: string): Promise<Outcome> {
  const env = { REQON_DATA_DIR: path.join(dir, 'data') };
  const before = api.requests.length;
  let result = await runCli(cli, ['run', MISSION, '--source', `Api=${api.url}`, '--db', db, '--quiet', ...(crashAt ? ['--crash-at', crashAt] : [])], { cwd: dir, env });
  const runId = runIdOf(result);
  const killed = result.signal === 'SIGKILL';
  if (killed) result = await runCli(cli, ['resume', runId, '--db', db, '--quiet'], { cwd: dir, env });
  expect(result.code, describeResult(result)).toBe(0);
  const facts = await readRunFacts(db, runId, ['prune_sql']);
  const text = fs.readFileSync(path.join(dir, 'data', 'prune_file.json'), 'utf8');
  const seen: Record<string, unknown[]> = {};
  for (const r of api.requests.slice(before)) {
    if (r.url !== '/seen') continue;
    const { kind, id } = r.body as { kind: string; id: unknown };
    (seen[kind] ??= []).push(id);
  }
  return { killed, events: facts.events, table: facts.tables['prune_sql']!, fileKeys: [...text.matchAll(/^ {2}"([^"]+)": \{/gm)].map((m) => m[1]!), seen };
}

const deletesOf = (events: StoredEvent[]) =>
  events.filter((e): e is StoredEvent<'store.write'> => e.type === 'store.write' && e.payload.op === 'delete');

/** Each point's ordinals (1-based, in first-pass order) that belong to a delete's batch. */
function deleteOrdinals(events: StoredEvent[]): { point: CrashPoint; n: number }[] {
  const ids = new Set(deletesOf(events).map((e) => e.payload.effectId));
  const keys = new Map<CrashPoint, string[]>();
  const externalBatchAt = (stepPath: string) => events.some((e) => e.type === 'store.intent' && e.stepPath === stepPath);
  for (const event of events) {
    for (const { point, key } of passesRecordedBy(event, { format: 2, externalBatchAt })) {
      const list = keys.get(point) ?? [];
      if (!list.includes(key)) list.push(key);
      keys.set(point, list);
    }
  }
  const out: { point: CrashPoint; n: number }[] = [];
  for (const [point, list] of keys) list.forEach((key, i) => ids.has(key) && out.push({ point, n: i + 1 }));
  return out;
}

describe.each(backends)('a crash around delete S[k], then resume (%s log)', (backend) => {
  let reference: Outcome;
  let armed: { point: CrashPoint; n: number }[] = [];

  it('a crash-free run removes 2 and 4 from each store and keeps the rest', async () => {
    reference = await runToEnd(backend, 'reference');
    expect(reference.killed).toBe(false);
    expect(reference.seen).toEqual({ sql: [1, 3, 5], file: [1, 3, 5], memory: [1, 3, 5] });
    expect(reference.table.map((r) => r.key)).toEqual(['1', '3', '5']);
    expect(reference.fileKeys).toEqual(['1', '3', '5']);
    expect(deletesOf(reference.events).map((e) => [e.payload.store, e.payload.key, e.payload.removed])).toEqual([
      ['tab', '2', true], ['fil', '2', true], ['mem', '2', true], ['tab', '4', true], ['fil', '4', true], ['mem', '4', true], ['fil', 'never', false],
    ]);
    armed = deleteOrdinals(reference.events);
    // 7 deletes pass before-effect and mid-store; the 3 file deletes pass after-effect too.
    expect(armed.map((a) => a.point).sort()).toEqual([...Array(3).fill('after-effect'), ...Array(7).fill('before-effect'), ...Array(7).fill('mid-store')]);
  }, 60_000);

  it('at every crash point of every delete: killed there, resumed, each record removed once and the rest kept', async () => {
    expect(armed.length).toBeGreaterThan(0);
    for (const { point, n } of armed) {
      const spec = `${point}:${n}`;
      const outcome = await runToEnd(backend, spec.replace(':', '-'), spec);
      expect(outcome.killed, spec).toBe(true);
      expect({ spec, seen: outcome.seen }).toEqual({ spec, seen: reference.seen });
      expect({ spec, table: outcome.table }).toEqual({ spec, table: reference.table });
      expect({ spec, file: outcome.fileKeys }).toEqual({ spec, file: reference.fileKeys });
      // One delete event per delete step: nothing removed twice, nothing recorded twice.
      const deletes = deletesOf(outcome.events).map((e) => `${e.payload.store}[${e.payload.key}]`);
      expect({ spec, deletes }).toEqual({ spec, deletes: ['tab[2]', 'fil[2]', 'mem[2]', 'tab[4]', 'fil[4]', 'mem[4]', 'fil[never]'] });
    }
  }, 300_000);
});
