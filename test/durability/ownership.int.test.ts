/**
 * Ownership of a run: one process at a time, fenced.
 *
 * - Two `reqon resume ID` started at once on a crashed run (its owner dead) or on a run its owner
 *   released: exactly one proceeds to the end (exit 0), the other exits 1 saying who owns the run,
 *   and every effect is applied once. The API answers each POST slowly, so the winner still holds
 *   the run while the loser asks for it.
 * - A lease held by a live process (support/lease-holder.ts, through the log API) is respected
 *   until it expires, then taken over; the old owner's next commit fails with LeaseLostError and
 *   writes nothing.
 * On every log backend (test/support/temp-log.ts); on PostgreSQL the lease's expiry is the
 * database's clock (the same machine's here).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import type { Lease, LeaseHeld } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import type { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type Backend, type TempLogTarget } from '../support/temp-log.js';
import { builtCli, builtLeaseHolder, describeResult, REPO, runCli, runIdOf, type CliResult } from './support/cli-build.js';
import { effectReport, ITEMS, startMissionApi } from './support/mission-api.js';
import { readRunFacts, seqsAreContiguous } from './support/run-facts.js';

const MISSION = path.join(REPO, 'test/durability/fixtures/ownership.vague');
const POST_DELAY_MS = 400;

let cli: string;
let dir: string;
let db: string;
let target: TempLogTarget | undefined;
let api: FakeApi;
let holder: ChildProcessWithoutNullStreams | undefined;

beforeAll(() => {
  cli = builtCli();
}, 180_000);

async function setup(backend: Backend): Promise<void> {
  target = await tempLogTarget(backend, 'reqon-ownership-');
  dir = target.dir;
  db = target.target;
  api = await startMissionApi();
  // Slow effects: a resume that wins the run holds it for seconds.
  api.on('POST /effects', async (req) => {
    await new Promise((resolve) => setTimeout(resolve, POST_DELAY_MS));
    return { status: 201, body: { receipt: `r-${(req.body as { id: string }).id}` } };
  });
}

afterEach(async () => {
  if (holder && holder.exitCode === null) holder.kill('SIGKILL');
  holder = undefined;
  await api?.stop();
  await target?.drop();
  target = undefined;
});

function reqon(...args: string[]): Promise<CliResult> {
  return runCli(cli, [...args, '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
}

/** Two resumes at once: one completes, the other is told who owns the run; effects once. */
async function expectOneResumeWins(runId: string): Promise<void> {
  const results = await Promise.all([reqon('resume', runId, '--quiet'), reqon('resume', runId, '--quiet')]);
  const winners = results.filter((r) => r.code === 0);
  const losers = results.filter((r) => r.code !== 0);
  expect(winners.length, results.map(describeResult).join('\n---\n')).toBe(1);
  expect(losers.length).toBe(1);
  expect(losers[0]!.code, describeResult(losers[0]!)).toBe(11); // refused: the run goes on in the winner
  expect(losers[0]!.stderr).toMatch(new RegExp(`run ${runId} is owned by \\S+:\\d+:\\S+ until \\d{4}-\\d\\d-\\d\\dT`));

  const facts = await readRunFacts(db, runId, ['owned_out']);
  expect(facts.run.status).toBe('completed');
  expect(seqsAreContiguous(facts.events)).toBe(true);
  expect(facts.tables.owned_out!.map((r) => r.key)).toEqual(ITEMS.map((i) => i.id));
  // One process took the run over: exactly one resume is in its log.
  expect(facts.events.filter((e) => e.type === 'run.resumed')).toHaveLength(1);
  const effects = effectReport(api);
  expect(effects.applied.size).toBe(ITEMS.length);
  expect([...effects.applied.values()].every((n) => n === 1)).toBe(true);
  expect((await reqon('verify', runId)).code).toBe(0);
}

/** Starts the lease holder on `runId` and reads its first line (its lease, or who holds the run). */
async function startHolder(runId: string, ttlMs: number, takeOverFrom: string): Promise<{ lines: AsyncIterator<string>; acquired: Lease | LeaseHeld }> {
  holder = spawn(process.execPath, [builtLeaseHolder(), db, runId, String(ttlMs), takeOverFrom], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  holder.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: holder.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error(`the lease holder exited without a word: ${stderr}`);
  return { lines, acquired: JSON.parse(first.value) as Lease | LeaseHeld };
}

describe.each(backends)('%s: one owner at a time', (backend) => {
  it('two resumes of a crashed run (owner dead): one proceeds, the other is told the run is owned', async () => {
    await setup(backend);
    const killed = await reqon('run', MISSION, '--source', `Api=${api.url}`, '--quiet', '--crash-at', 'after-effect:5');
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);
    const before = await readRunFacts(db, runId, []);
    expect(before.run.status).toBe('running');
    expect(before.run.owner).not.toBeNull();
    await expectOneResumeWins(runId);
  });

  it('two resumes of a run its owner released: one proceeds, the other is told the run is owned', async () => {
    await setup(backend);
    // The owner stops before its fifth step and releases the run (what a stopping worker does).
    const log = await openLog(db);
    const env = createRealEnv({});
    let steps = 0;
    let runId = '';
    try {
      const files = { entry: MISSION, files: [{ path: MISSION, text: fs.readFileSync(MISSION, 'utf8') }] };
      await expect(
        startRun(files, { sources: { Api: api.url }, env: {} }, {
          log,
          env,
          dataDir: path.join(dir, 'data'),
          onRunId: (id) => (runId = id),
          shouldStop: () => ++steps > 5,
        }),
      ).rejects.toThrow(/released/);
    } finally {
      await env.http.close();
      await log.close();
    }
    const before = await readRunFacts(db, runId, ['owned_out']);
    expect(before.run.status).toBe('running');
    expect(before.run.owner).toBeNull();
    expect(before.tables.owned_out!.length).toBeGreaterThan(0);
    expect(before.tables.owned_out!.length).toBeLessThan(ITEMS.length);
    await expectOneResumeWins(runId);
  });

  it('respects a live lease until it expires, then takes over; the old owner is fenced out', async () => {
    await setup(backend);
    const killed = await reqon('run', MISSION, '--source', `Api=${api.url}`, '--quiet', '--crash-at', 'mid-store:2');
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);
    const dead = (await readRunFacts(db, runId, [])).run.owner!;

    const ttlMs = 6_000;
    const { lines, acquired } = await startHolder(runId, ttlMs, dead);
    expect('epoch' in acquired, JSON.stringify(acquired)).toBe(true);
    const lease = acquired as Lease;
    expect(lease.owner).toBe(`${os.hostname()}:${holder!.pid}:holder`);

    // Live owner, live lease: refused, with who holds it and until when; nothing written.
    const beforeRefusal = await readRunFacts(db, runId, ['owned_out']);
    const refused = await reqon('resume', runId, '--quiet');
    expect(Date.now(), 'the refusal must come while the lease is live').toBeLessThan(lease.expiresAt);
    expect(refused.code, describeResult(refused)).toBe(11);
    expect(refused.stderr).toContain(`run ${runId} is owned by ${lease.owner} until ${new Date(lease.expiresAt).toISOString()}`);
    // With a payload too: the run is that process's, not failed.
    const withPayload = await reqon('resume', runId, '--payload', '{"ok":true}', '--quiet');
    expect(withPayload.code, describeResult(withPayload)).toBe(11);
    expect(withPayload.stderr).toContain(`is not suspended (it is running in ${lease.owner})`);
    const afterRefusal = await readRunFacts(db, runId, ['owned_out']);
    expect(afterRefusal.events).toEqual(beforeRefusal.events);
    expect(afterRefusal.run.owner).toBe(lease.owner);
    expect(afterRefusal.run.leaseEpoch).toBe(lease.epoch);

    // The holder is still alive but its lease ran out: the next resume takes the run over.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, lease.expiresAt - Date.now() + 100)));
    expect(holder!.exitCode).toBeNull();
    const resumed = await reqon('resume', runId, '--quiet');
    expect(resumed.code, describeResult(resumed)).toBe(0);
    const done = await readRunFacts(db, runId, ['owned_out']);
    expect(done.run.status).toBe('completed');
    expect(done.run.leaseEpoch).toBeGreaterThan(lease.epoch);

    // The old owner wakes up and commits with its lease: fenced, nothing written.
    holder!.stdin.write('commit\n');
    const answer = await lines.next();
    expect(answer.done).toBe(false);
    const outcome = JSON.parse(answer.value as string) as { error?: string; message?: string; committed?: number };
    expect(outcome.error, JSON.stringify(outcome)).toBe('LeaseLostError');
    expect(outcome.message).toContain(`lease on run '${runId}' lost`);
    holder!.stdin.write('exit\n');
    const after = await readRunFacts(db, runId, ['owned_out']);
    expect(after.events).toEqual(done.events);
    expect(after.events.some((e) => e.stepPath === 'holder')).toBe(false);

    expect(done.tables.owned_out!.map((r) => r.key)).toEqual(ITEMS.map((i) => i.id));
    const effects = effectReport(api);
    expect(effects.applied.size).toBe(ITEMS.length);
    expect([...effects.applied.values()].every((n) => n === 1)).toBe(true);
    expect((await reqon('verify', runId)).code).toBe(0);
  });
});
