/**
 * The mission a run's row remembers is what a resume, a verify and a fork run. The row is the
 * log's mutable part: its files edited outside the engine were verified "✓" and a resume ran the
 * edit — a store's table renamed, the rest of the run's records written elsewhere (helper 75).
 * Now the files must hash to the row's mission hash, and that must be the hash the log's events
 * name; either mismatch is a damaged log, and nothing is run or appended.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missionHash } from '../../engine/executor/mission-cache.js';
import { openLog } from '../../engine/log/open-log.js';
import type { MissionFiles } from '../../engine/log/log.js';
import { builtCli, describeResult, runCli, runIdOf } from './support/cli-build.js';

const MISSION = `mission Ledger {
  store ledger: sql("ledger")
  action First {
    store { id: "a", amount: 1 } -> ledger { key: .id }
    pause { duration: "1h" }
    store { id: "b", amount: 2 } -> ledger { key: .id }
  }
  run First
}
`;

let cli: string;
let dir: string;
beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-remembered-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), MISSION);
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const on = (db: string) => (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, db)], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, `data-${db}`) } });

/** A suspended run whose row's mission is edited by `edit` (the files alone, or the files and their hash). */
async function editedRun(db: string, withHash: boolean): Promise<{ runId: string; events: () => number }> {
  const reqon = on(db);
  const started = await reqon('run', 'm.vague', '--quiet');
  expect(started.code, describeResult(started)).toBe(10);
  const runId = runIdOf(started);
  const file = new Database(path.join(dir, db));
  const row = file.prepare('SELECT mission_files FROM reqon_runs WHERE run_id = ?').get(runId) as { mission_files: string };
  const files = JSON.parse(row.mission_files) as MissionFiles;
  const edited: MissionFiles = { ...files, files: files.files.map((f) => ({ ...f, text: f.text.replace('sql("ledger")', 'sql("shadow")') })) };
  expect(JSON.stringify(edited)).not.toBe(row.mission_files);
  const set = withHash ? 'mission_files = ?, mission_hash = ?' : 'mission_files = ?';
  file.prepare(`UPDATE reqon_runs SET ${set} WHERE run_id = ?`).run(...(withHash ? [JSON.stringify(edited), missionHash(edited)] : [JSON.stringify(edited)]), runId);
  file.close();
  const events = () => {
    const read = new Database(path.join(dir, db), { readonly: true });
    try {
      return (read.prepare('SELECT count(*) AS n FROM reqon_events WHERE run_id = ?').get(runId) as { n: number }).n;
    } finally {
      read.close();
    }
  };
  return { runId, events };
}

describe('a run whose remembered mission was edited outside the engine', () => {
  for (const withHash of [false, true]) {
    it(`is a damaged log to verify, resume and fork${withHash ? ' (its row hash edited to match)' : ''}`, async () => {
      const db = withHash ? 'hashed.db' : 'files.db';
      const reqon = on(db);
      const { runId, events } = await editedRun(db, withHash);
      const before = events();

      const verified = await reqon('verify', runId);
      expect(verified.code, describeResult(verified)).toBe(1);
      expect(verified.stdout + verified.stderr).toContain('DAMAGED LOG');
      expect(verified.stdout + verified.stderr).toContain(withHash ? 'is not the one its log names' : 'is not the one it ran');

      const resumed = await reqon('resume', runId, '--quiet');
      expect(resumed.code, describeResult(resumed)).toBe(1);
      expect(resumed.stderr).toContain(`the log of run ${runId} is damaged`);
      expect(events()).toBe(before);

      const forked = await reqon('fork', runId, '--at', '2', '--quiet');
      expect(forked.code, describeResult(forked)).toBe(1);
      expect(forked.stderr).toContain('is damaged');
      // No table of the edit was made.
      const file = new Database(path.join(dir, db), { readonly: true });
      const tables = file.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%shadow%'").all();
      file.close();
      expect(tables).toEqual([]);
    }, 60_000);
  }

  it('an untouched run verifies and resumes as before', async () => {
    const reqon = on('untouched.db');
    const started = await reqon('run', 'm.vague', '--quiet');
    const runId = runIdOf(started);
    expect((await reqon('verify', runId)).code).toBe(3); // suspended: verified so far
    // A resume by hand spends the pause now.
    const resumed = await reqon('resume', runId, '--quiet');
    expect(resumed.code, describeResult(resumed)).toBe(0);
    expect((await reqon('verify', runId)).code).toBe(0);
  }, 60_000);
  it('a fork of a run that adopted an edited mission names its own, not the copy of its parent\'s (helper 76: verify said DAMAGED)', async () => {
    const reqon = on('adopted.db');
    const write = (name: string, extra: string) =>
      fs.writeFileSync(path.join(dir, name), MISSION.replace('  run First', `  action Second {\n    store { id: "c" } -> ledger { key: .id }\n${extra}  }\n  run First then Second`));
    write('one.vague', '');
    write('two.vague', '    store { id: "d" } -> ledger { key: .id }\n');
    write('three.vague', '    store { id: "d" } -> ledger { key: .id }\n    store { id: "e" } -> ledger { key: .id }\n');
    const started = await reqon('run', 'one.vague', '--quiet');
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    // Resumed with an edit that replays: the run adopts it (its run.resumed names it).
    const adopted = await reqon('resume', runId, '--mission', 'two.vague', '--quiet');
    expect(adopted.code, describeResult(adopted)).toBe(0);
    expect((await reqon('verify', runId)).code).toBe(0);
    const events = (await reqon('events', runId, '--json')).stdout.trim().split('\n').map((l) => JSON.parse(l) as { seq: number; type: string; stepPath: string });
    const before = events.find((e) => e.type === 'action.completed' && e.stepPath === 'Second')!.seq - 1;
    const forked = await reqon('fork', runId, '--at', String(before), '--mission', 'three.vague', '--quiet');
    expect(forked.code, describeResult(forked)).toBe(0);
    const fork = runIdOf(forked);
    const verified = await reqon('verify', fork);
    expect(verified.code, describeResult(verified)).toBe(0);
    // A fork of it from before the pause goes on to the pause (not refused as damaged).
    const again = await reqon('fork', fork, '--at', '3', '--quiet');
    expect(again.code, describeResult(again)).toBe(10);
  }, 60_000);
  // Helper 77: the worker exited, and again each restart; helper 81: so did its tick, where a
  // delivery for the damaged run's webhook pause was in the inbox.
  it.each([
    ['its timer is due', 'pause { duration: "1s" }'],
    ['a delivery for its webhook pause is in the inbox', 'pause { resumeOn: webhook "/approve-damaged" }'],
  ])("is that run's trouble to a worker, which backs off from it and goes on: %s", async (_when, pause) => {
    const db = pause.includes('webhook') ? 'hooked.db' : 'worker.db';
    const reqon = on(db);
    fs.writeFileSync(path.join(dir, `${db}.vague`), MISSION.replace('pause { duration: "1h" }', pause));
    fs.writeFileSync(path.join(dir, 'soon.vague'), MISSION.replace('"1h"', '"1s"'));
    const started = await reqon('run', `${db}.vague`, '--quiet');
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    const healthy = runIdOf(await reqon('run', 'soon.vague', '--quiet'));
    const file = new Database(path.join(dir, db));
    file.prepare("UPDATE reqon_runs SET mission_files = replace(mission_files, 'ledger', 'shadow') WHERE run_id = ?").run(runId);
    file.close();
    if (pause.includes('webhook')) {
      const log = await openLog(path.join(dir, db));
      try {
        expect(await log.deliverWebhook('/approve-damaged', 'evt-damaged', { ok: true }, Date.now())).toBe('accepted');
      } finally {
        await log.close();
      }
    }
    await new Promise((r) => setTimeout(r, 1_100));
    const worker = await reqon('worker', '--once');
    expect(worker.code, describeResult(worker)).toBe(1);
    expect(worker.stderr).toContain(`the log of run ${runId} is damaged`);
    expect(worker.stderr).not.toMatch(/\n\s+at /);
    // The other due run was carried to its end; the damaged one waits as it was.
    expect((await reqon('show', healthy)).stdout).toMatch(/completed/);
    expect((await reqon('show', runId)).stdout).toMatch(/suspended/);
  }, 60_000);
});
