/**
 * Replaying a run against an edited mission (`reqon resume ID --mission FILE`, `reqon verify ID
 * --mission FILE`), on the built CLI.
 *
 * An edit that moves or changes a step the run has already recorded (fixtures/edit-inserted.vague,
 * edit-reordered.vague) must stop with the non-determinism error naming the step path and the
 * recorded event, leave the run's log exactly as it was, and leave the run resumable with its
 * original mission. An edit after the last recorded step (edit-compatible.vague) carries on with
 * the edited behaviour.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import type { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type Backend, type TempLogTarget } from '../support/temp-log.js';
import { builtCli, describeResult, REPO, runCli, runIdOf, type CliResult } from './support/cli-build.js';
import { effectReport, ITEMS, startMissionApi } from './support/mission-api.js';
import { readRunFacts } from './support/run-facts.js';

const FIXTURES = path.join(REPO, 'test/durability/fixtures');
const BASE = path.join(FIXTURES, 'edit-base.vague');
const INSERTED = path.join(FIXTURES, 'edit-inserted.vague');
const REORDERED = path.join(FIXTURES, 'edit-reordered.vague');
const INSERTED_POST = path.join(FIXTURES, 'edit-inserted-post.vague');
const COMPATIBLE = path.join(FIXTURES, 'edit-compatible.vague');
const STORE_TABLE = path.join(FIXTURES, 'edit-store-table.vague');
const STORE_KIND = path.join(FIXTURES, 'edit-store-kind.vague');
const TABLES = ['edit_out', 'edit_summary'];

let cli: string;
let dir: string;
let db: string;
let target: TempLogTarget | undefined;
let api: FakeApi;

beforeAll(() => {
  cli = builtCli();
}, 180_000);

async function setup(backend: Backend): Promise<void> {
  target = await tempLogTarget(backend, 'reqon-edited-');
  dir = target.dir;
  db = target.target;
  api = await startMissionApi();
}

afterEach(async () => {
  await api?.stop();
  await target?.drop();
  target = undefined;
});

function reqon(...args: string[]): Promise<CliResult> {
  return runCli(cli, [...args, '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
}

/** Starts the base mission; it runs Sync and suspends at Hold's pause. */
async function suspendedRun(): Promise<string> {
  const started = await reqon('run', BASE, '--source', `Api=${api.url}`, '--quiet');
  expect(started.code, describeResult(started)).toBe(10);
  return runIdOf(started);
}

/** The refused resume: exit 1, the non-determinism error naming the run, step and recorded event. */
function expectNondeterminism(result: CliResult, runId: string, stepPath: string, events: StoredEvent[]): StoredEvent {
  expect(result.code, describeResult(result)).toBe(1);
  expect(result.signal).toBeNull();
  const match = /Non-determinism in run (\S+) at step (\S+) \(seq (\d+)\): the log recorded a ([a-z.]+) event/.exec(result.stderr);
  expect(match, `non-determinism error on stderr: ${result.stderr}`).not.toBeNull();
  const [, run, step, seq, type] = match!;
  expect(run).toBe(runId);
  expect(step).toBe(stepPath);
  // The event it names is really there, at that seq.
  const recorded = events[Number(seq) - 1]!;
  expect(recorded.seq).toBe(Number(seq));
  expect(recorded.type).toBe(type);
  expect(result.stderr).toMatch(/Resume with the original mission/);
  return recorded;
}

/** Resumes (with the mission the run started with) until it completes. */
async function finish(runId: string): Promise<void> {
  for (let round = 0; ; round++) {
    const result = await reqon('resume', runId, '--quiet');
    if (result.code === 0) return;
    expect(result.code, describeResult(result)).toBe(10);
    expect(round).toBeLessThan(2);
  }
}

function expectEffectsOnce(): void {
  const effects = effectReport(api);
  expect(effects.applied.size).toBe(ITEMS.length);
  expect([...effects.applied.values()].every((n) => n === 1)).toBe(true);
}

interface VerifyJson {
  ok: boolean;
  divergence: { stepPath: string; seq: number; recorded: string; asked: string; explanation: string } | null;
}

describe.each(backends)('%s: resume and verify against an edited mission', (backend) => {
  for (const [label, edited, stepPath, recordedType] of [
    ['a step inserted at the top of the action', INSERTED, 'Sync/0', 'value.recorded'],
    ['two loop steps swapped', REORDERED, 'Sync/1[0]/0', 'http.request'],
    ['a POST inserted at the top of the action', INSERTED_POST, 'Sync/0', 'value.recorded'],
  ] as const) {
    it(`refuses ${label} before the pause, changes nothing, and resumes with the original`, async () => {
      await setup(backend);
      const runId = await suspendedRun();
      const before = await readRunFacts(db, runId, TABLES);
      expect(before.run.status).toBe('suspended');

      const requests = api.requests.length;
      const refused = await reqon('resume', runId, '--mission', edited, '--quiet');
      const named = expectNondeterminism(refused, runId, stepPath, before.events);
      // Refused before anything left the process: not one request reached the server.
      expect(api.lines().slice(requests)).toEqual([]);
      expect(named.stepPath).toBe(stepPath);
      expect(named.type).toBe(recordedType);

      // Nothing changed: same events, same status, still waiting on the same pause, same tables.
      const after = await readRunFacts(db, runId, TABLES);
      expect(after.run.lastSeq).toBe(before.run.lastSeq);
      expect(after.events).toEqual(before.events);
      expect(after.run.status).toBe('suspended');
      expect(after.run.waitingOn).toBe(before.run.waitingOn);
      expect(after.tables).toEqual(before.tables);

      const verified = await reqon('verify', runId, '--mission', edited, '--json');
      expect(verified.code, describeResult(verified)).toBe(1);
      expect(api.lines().slice(requests)).toEqual([]);
      const report = JSON.parse(verified.stdout) as VerifyJson;
      expect(report.ok).toBe(false);
      expect(report.divergence?.stepPath).toBe(stepPath);
      expect(report.divergence?.seq).toBe(named.seq);
      expect(report.divergence?.recorded).toContain(recordedType);
      expect(report.divergence?.explanation).toMatch(/edited mission/);

      await finish(runId);
      const done = await readRunFacts(db, runId, TABLES);
      expect(done.run.status).toBe('completed');
      expect(done.tables.edit_out!.map((r) => r.key)).toEqual(ITEMS.map((i) => i.id));
      expect(done.tables.edit_summary).toEqual([{ key: 'summary', record: { id: 'summary', extras: 2 } }]);
      expectEffectsOnce();
      expect((await reqon('verify', runId)).code).toBe(0);
    });
  }

  it('refuses an edited resume of a crashed run without appending, then resumes with the original', async () => {
    await setup(backend);
    const killed = await reqon('run', BASE, '--source', `Api=${api.url}`, '--quiet', '--crash-at', 'mid-store:3');
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);
    const before = await readRunFacts(db, runId, TABLES);
    expect(before.tables.edit_out).toHaveLength(2);

    for (const [edited, stepPath] of [
      [INSERTED, 'Sync/0'],
      [REORDERED, 'Sync/1[0]/0'],
      [INSERTED_POST, 'Sync/0'],
    ] as const) {
      const requests = api.requests.length;
      const refused = await reqon('resume', runId, '--mission', edited, '--quiet');
      expectNondeterminism(refused, runId, stepPath, before.events);
      expect(api.lines().slice(requests)).toEqual([]);
      const after = await readRunFacts(db, runId, TABLES);
      expect(after.events).toEqual(before.events);
      expect(after.tables).toEqual(before.tables);
      expect(after.run.status).toBe('running');
      // The refused process gave the run up: nobody owns it, so the next resume needs no wait.
      expect(after.run.owner).toBeNull();
    }

    await finish(runId);
    const done = await readRunFacts(db, runId, TABLES);
    expect(done.run.status).toBe('completed');
    expect(done.tables.edit_out!.map((r) => r.key)).toEqual(ITEMS.map((i) => i.id));
    expectEffectsOnce();
    expect((await reqon('verify', runId)).code).toBe(0);
  });

  // Writes are recorded under the store's name: before, an edit of its declaration (another
  // table, another kind) replayed as a match, and the resumed run put the rest of the records in
  // the new place while those written before stayed in the old one.
  for (const [label, edited] of [
    ['a store moved to another table', STORE_TABLE],
    ['a store of another kind', STORE_KIND],
  ] as const) {
    it(`refuses ${label} where the run wrote to it, changes nothing, and resumes with the original`, async () => {
      await setup(backend);
      const runId = await suspendedRun();
      const before = await readRunFacts(db, runId, TABLES);
      const requests = api.requests.length;

      const verified = await reqon('verify', runId, '--mission', edited);
      expect(verified.code, describeResult(verified)).toBe(1);
      expect(verified.stdout).toMatch(/DIVERGED at step Sync\/1\[0\]\/1 /);
      expect(verified.stdout).toMatch(/the store `out` was sql\("edit_out"\) when the run wrote to it and is \w+\("edit_out\w*"\) now/);
      expect(verified.stdout).not.toMatch(/Idempotency-Key/);

      const refused = await reqon('resume', runId, '--mission', edited, '--quiet');
      expect(refused.code, describeResult(refused)).toBe(1);
      expect(refused.stderr).toMatch(/Non-determinism in run \S+ at step Sync\/1\[0\]\/1 .*the store `out` was sql\("edit_out"\)/);
      expect(api.lines().slice(requests)).toEqual([]);
      const after = await readRunFacts(db, runId, TABLES);
      expect(after.events).toEqual(before.events);
      expect(after.run.status).toBe('suspended');

      await finish(runId);
      const done = await readRunFacts(db, runId, TABLES);
      expect(done.tables.edit_out!.map((r) => r.key)).toEqual(ITEMS.map((i) => i.id));
      expectEffectsOnce();
    });
  }

  // A suspension's recorded intent was taken as it stood: before, an edited duration, a timer
  // turned into a webhook, or a wait's path, timeout or count replayed as a match while the run
  // stayed suspended on what it had recorded.
  it('refuses an edited pause or wait the run is suspended on, and changes nothing', async () => {
    await setup(backend);
    const runId = await suspendedRun();
    const before = await readRunFacts(db, runId, TABLES);
    const edits = [
      ['pause { duration: "1h" }', 'pause { duration: "2h" }', /line \d+: the pause due at \S+ became a pause due at \S+/],
      ['pause { duration: "1h" }', 'pause { resumeOn: webhook "/hold" }', /the pause due at \S+ became a pause on webhook \/hold/],
    ] as const;
    for (const [from, to, change] of edits) {
      const edited = path.join(dir, 'edited-pause.vague');
      fs.writeFileSync(edited, fs.readFileSync(BASE, 'utf8').replace(from, to));
      const verified = await reqon('verify', runId, '--mission', edited);
      expect(verified.code, describeResult(verified)).toBe(1);
      expect(verified.stdout).toMatch(/DIVERGED at step Hold\/0 /);
      expect(verified.stdout).toMatch(change);
      const refused = await reqon('resume', runId, '--mission', edited, '--quiet');
      expect(refused.code, describeResult(refused)).toBe(1);
      expect(refused.stderr).toMatch(change);
    }
    const after = await readRunFacts(db, runId, TABLES);
    expect(after.events).toEqual(before.events);
    expect(after.run.status).toBe('suspended');
    expect(after.run.waitingOn).toBe(before.run.waitingOn);
    expect((await reqon('verify', runId, '--mission', BASE)).code).toBe(3); // unfinished: no divergence so far, not a whole check

    const waiting = path.join(dir, 'waiting.vague');
    const wait = (spec: string) => `mission W {\n  store seen: memory("seen")\n  action Hold {\n    wait { ${spec} }\n    store { id: "w" } -> seen { key: .id }\n  }\n  run Hold\n}\n`;
    fs.writeFileSync(waiting, wait('path: "/hooks/w", timeout: 600000, expectedEvents: 1'));
    const started = await reqon('run', waiting, '--quiet');
    expect(started.code, describeResult(started)).toBe(10);
    for (const spec of ['path: "/hooks/other", timeout: 600000, expectedEvents: 1', 'path: "/hooks/w", timeout: 900000, expectedEvents: 1', 'path: "/hooks/w", timeout: 600000, expectedEvents: 2']) {
      fs.writeFileSync(waiting, wait(spec));
      const verified = await reqon('verify', runIdOf(started), '--mission', waiting);
      expect(verified.code, `${spec}: ${describeResult(verified)}`).toBe(1);
      expect(verified.stdout).toMatch(/line 4: a wait for 1 event\(s\) on \/hooks\/w until \S+ became a wait for \d event\(s\) on \/hooks\/\w+ until \S+/);
    }
  });

  it('carries on when a store is declared anew that the run has not written yet', async () => {
    await setup(backend);
    const runId = await suspendedRun();
    const moved = path.join(dir, 'summary-moved.vague');
    fs.writeFileSync(moved, fs.readFileSync(BASE, 'utf8').replace('sql("edit_summary")', 'sql("edit_summary_moved")'));
    const verified = await reqon('verify', runId, '--mission', moved);
    expect(verified.code, describeResult(verified)).toBe(3); // unfinished: no divergence so far, not a whole check
    const resumed = await reqon('resume', runId, '--mission', moved, '--quiet');
    expect(resumed.code, describeResult(resumed)).toBe(0);
    const done = await readRunFacts(db, runId, ['edit_summary_moved']);
    expect(done.tables.edit_summary_moved).toEqual([{ key: 'summary', record: { id: 'summary', extras: 2 } }]);
  });

  it('carries on with an edit after the last recorded step, with the edited behaviour', async () => {
    await setup(backend);
    const runId = await suspendedRun();
    const before = await readRunFacts(db, runId, TABLES);

    const verified = await reqon('verify', runId, '--mission', COMPATIBLE, '--json');
    expect(verified.code, describeResult(verified)).toBe(3); // unfinished: no divergence so far, not a whole check
    expect((JSON.parse(verified.stdout) as VerifyJson).divergence).toBeNull();

    const resumed = await reqon('resume', runId, '--mission', COMPATIBLE, '--quiet');
    expect(resumed.code, describeResult(resumed)).toBe(0);
    const done = await readRunFacts(db, runId, TABLES);
    expect(done.run.status).toBe('completed');
    // The recorded prefix is untouched; the rest ran with the edited map.
    expect(done.events.slice(0, before.events.length)).toEqual(before.events);
    expect(done.tables.edit_summary).toEqual([
      { key: 'summary', record: { id: 'summary', extras: 2, edited: true, source: 'edit-compatible' } },
    ]);
    expect(done.tables.edit_out).toEqual(before.tables.edit_out);
    expectEffectsOnce();
    const reverified = await reqon('verify', runId, '--mission', COMPATIBLE);
    expect(reverified.code, describeResult(reverified)).toBe(0);
  });
});
