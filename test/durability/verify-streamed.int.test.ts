/**
 * `verifyRun` reads a long run as the walk reaches it (a window, as a resume does) where the log
 * can read synchronously, and whole otherwise: both must give the same report, every fact of
 * it. And a log that lost events outside the engine (a deleted row, a lost `run.completed`) or
 * whose recorded effect ids or request identities were changed is never verified (helper 53:
 * a run row saying completed with its `run.completed` deleted verified as "63 of 63 events").
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { forkRun } from '../../engine/executor/fork-run.js';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified, type VerifyReport } from '../../engine/executor/verify-report.js';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { builtCli, openConformance, runCli, type Conformance } from '../conformance/harness.js';

const MISSION = `mission Ship {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store shipped: sql("shipped")
  action Send {
    get "/orders"
    for o in response {
      post "/shipments" { body: { order: o.id, qty: o.qty } }
      let label = concat("L-", o.id)
      store { id: o.id, label: label, at: now() } -> shipped { key: .id }
    }
  }
  run Send
}
`;

/** More orders than the journal reads at a time (4096 events), so the window slides. */
const ORDERS = Array.from({ length: 1_500 }, (_, i) => ({ id: `o${i}`, qty: i % 7 }));

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

async function completedRun(): Promise<{ c: Conformance; runId: string }> {
  c = await openConformance();
  c.api.on('GET /orders', { body: ORDERS });
  c.api.on('POST /shipments', { status: 201, body: { ok: true } });
  const result = await c.start(c.mission('ship', MISSION));
  expect(result.status).toBe('completed');
  return { c, runId: result.runId };
}

/** The same log without its synchronous reader: verify reads the run whole. */
function readWhole(log: EventLog): EventLog {
  return new Proxy(log, {
    get(target, prop) {
      if (prop === 'replayReader') return undefined;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Both ways of reading, which must agree: the report of each. */
async function bothReports(log: EventLog, runId: string, env: Conformance['env'], missionText?: string): Promise<[VerifyReport, VerifyReport]> {
  const missionFiles = missionText === undefined ? undefined : c!.mission('edited', missionText);
  const opts = { env, ...(missionFiles ? { missionFiles } : {}) };
  return [await verifyRun(log, runId, opts), await verifyRun(readWhole(log), runId, opts)];
}

/** Runs `sql` on the log's file with its append-only triggers dropped (a log edited outside the engine). */
function tamper(dbPath: string, sql: string, ...params: unknown[]): void {
  const db = new Database(dbPath);
  try {
    db.exec('DROP TRIGGER IF EXISTS reqon_events_append_only_update; DROP TRIGGER IF EXISTS reqon_events_append_only_delete;');
    expect(db.prepare(sql).run(...params).changes).toBe(1);
  } finally {
    db.close();
  }
}

function seqOf(dbPath: string, runId: string, where: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare(`SELECT seq FROM reqon_events WHERE run_id = ? AND ${where} ORDER BY seq LIMIT 1`).pluck().get(runId) as number;
  } finally {
    db.close();
  }
}

describe('verify reads a long run as it walks, and says the same as reading it whole', () => {
  it('a clean run: the same entries, verified both ways', async () => {
    const { c, runId } = await completedRun();
    const [streamed, whole] = await bothReports(c.log, runId, c.env);
    expect(streamed).toEqual(whole);
    expect(fullyVerified(streamed)).toBe(true);
    expect(streamed.original.length).toBe((await c.events(runId)).length - 1); // all but run.started
  });

  it('an edit: the same divergence, and the same "not checked" facts', async () => {
    const { c, runId } = await completedRun();
    const lateEdit = MISSION.replace('concat("L-", o.id)', 'o.id == "o1400" ? "changed" : concat("L-", o.id)');
    const [streamed, whole] = await bothReports(c.log, runId, c.env, lateEdit);
    expect(streamed).toEqual(whole);
    expect(streamed.divergence).toMatchObject({ cause: 'edit' });
    const timeoutEdit = MISSION.replace('base: "http://127.0.0.1:1" }', 'base: "http://127.0.0.1:1", timeout: 999 }');
    const [streamed2, whole2] = await bothReports(c.log, runId, c.env, timeoutEdit);
    expect(streamed2).toEqual(whole2);
    expect(streamed2.unchecked.join('\n')).toMatch(/source Api's timeout/);
  });
});

describe("a fork's concurrent branches", () => {
  // Helper 54: a fork's effects are named by the run whose stretch of the log the walk is in, and
  // in concurrent branches that depends on how they interleaved. Comparing store-write ids made
  // forks cut inside such a loop diverge on verify and fail on resume.
  const CONCURRENT = `mission C {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store out: sql("out")
  store mem: nosql("mem")
  action A {
    get "/orders"
    for o in response concurrency 4 {
      store { id: o.id, q: o.qty } -> out { key: .id }
      store { id: o.id, n: 1 } -> mem { key: .id, upsert: true }
    }
    for o in response concurrency 3 {
      post "/shipments" { body: { order: o.id } }
      store { id: o.id, v: 2 } -> out { key: .id, upsert: true }
    }
  }
  run A
}
`;

  it('forks cut anywhere in them verify without a divergence, and say which ids they took as recorded', async () => {
    c = await openConformance();
    c.api.on('GET /orders', { body: ORDERS.slice(0, 20) });
    c.api.on('POST /shipments', { status: 201, body: { ok: true } });
    const parent = await c.start(c.mission('concurrent', CONCURRENT));
    expect(parent.status).toBe('completed');
    const last = (await c.log.getRun(parent.runId))!.lastSeq;
    for (let at = 5; at < last; at += 6) {
      const fork = await forkRun(parent.runId, { atSeq: at }, c.deps());
      expect(fork.status, `fork at ${at}`).toBe('completed');
      const report = await verifyRun(c.log, fork.runId, { env: c.env });
      expect(report.divergence, `fork at ${at}`).toBeNull();
      // Every recorded id either derived again or named as not compared: never passed in silence.
      if (!fullyVerified(report)) expect(report.unchecked.join('\n'), `fork at ${at}`).toMatch(/store write\(s\) in concurrent branches of this fork/);
    }
  });
});

describe('a log edited or damaged outside the engine is never verified', () => {
  it('a finished run with an event past its run row\'s last seq is damaged, both ways', async () => {
    const { c, runId } = await completedRun();
    const last = (await c.log.getRun(runId))!.lastSeq;
    tamper(c.dbPath, `INSERT INTO reqon_events SELECT run_id, ?, type, step_path, payload, recorded_at FROM reqon_events WHERE run_id = ? AND seq = 7`, last + 1, runId);
    for (const report of await bothReports(c.log, runId, c.env)) {
      expect(report.divergence).toMatchObject({ cause: 'damaged-log', seq: last + 1 });
      expect(report.divergence!.recorded).toMatch(/holds events past seq \d+, where its completed run row ends/);
    }
  });

  it('its run.completed deleted: damaged, both ways', async () => {
    const { c, runId } = await completedRun();
    tamper(c.dbPath, `DELETE FROM reqon_events WHERE run_id = ? AND type = 'run.completed'`, runId);
    for (const report of await bothReports(c.log, runId, c.env)) {
      expect(report.ok).toBe(false);
      expect(fullyVerified(report)).toBe(false);
      expect(report.divergence).toMatchObject({ cause: 'damaged-log' });
      expect(report.divergence!.explanation).toMatch(/the log is damaged|The log is damaged/);
    }
  });

  it('reqon verify says DAMAGED LOG at the seq and exits 1, never "verified"', async () => {
    const { c, runId } = await completedRun();
    await c.log.close(); // the CLI opens the file itself
    tamper(c.dbPath, `DELETE FROM reqon_events WHERE run_id = ? AND type = 'run.completed'`, runId);
    const verified = await runCli(await builtCli(), ['verify', runId, '--db', c.dbPath], { cwd: c.dir });
    expect(verified.code, verified.stdout + verified.stderr).toBe(1);
    expect(verified.stdout).toMatch(/^DAMAGED LOG at seq \d+: .*\(deleted outside the engine\)\n  The log is damaged, so the run cannot be verified/);
    expect(verified.stdout).not.toMatch(/^verified:|matches its log/m);
    c.log = await openLog(c.dbPath); // for the harness's close
  });

  it('an event in the middle deleted: damaged at that seq, both ways', async () => {
    const { c, runId } = await completedRun();
    const seq = seqOf(c.dbPath, runId, `type = 'store.write' AND json_extract(payload, '$.key') = 'o700'`);
    tamper(c.dbPath, 'DELETE FROM reqon_events WHERE run_id = ? AND seq = ?', runId, seq);
    for (const report of await bothReports(c.log, runId, c.env)) {
      expect(report.divergence).toMatchObject({ cause: 'damaged-log', seq });
      expect(report.divergence!.recorded).toMatch(new RegExp(`seq ${seq} is missing`));
    }
  });

  it("a store write's recorded effect id that is not the one derived diverges there", async () => {
    const { c, runId } = await completedRun();
    const seq = seqOf(c.dbPath, runId, `type = 'store.write' AND json_extract(payload, '$.key') = 'o3'`);
    tamper(c.dbPath, `UPDATE reqon_events SET payload = json_set(payload, '$.effectId', 'ef_00000000000000000000000000000000') WHERE run_id = ? AND seq = ?`, runId, seq);
    for (const report of await bothReports(c.log, runId, c.env)) {
      expect(report.divergence).toMatchObject({ cause: 'nondeterminism', seq });
      expect(report.divergence!.recorded).toMatch(/as effect ef_0{32}/);
    }
  });

  it("a request whose logged copy shows another request than its identity is damaged, whatever part differs", async () => {
    const { c, runId } = await completedRun();
    const post = `type = 'http.request' AND json_extract(payload, '$.request.method') = 'POST'`;
    const edits: [string, string][] = [
      ['its URL', `json_set(payload, '$.request.url', 'http://evil.example/shipments')`],
      ['its method', `json_set(payload, '$.request.method', 'DELETE')`],
      ['its body', `json_set(payload, '$.request.body.qty', 99)`],
      ['its Idempotency-Key header', `json_set(payload, '$.request.headers.Idempotency-Key', 'ef_other')`],
    ];
    const seq = seqOf(c.dbPath, runId, post);
    for (const [part, edit] of edits) {
      tamper(c.dbPath, `UPDATE reqon_events SET payload = json_set(${edit}, '$.kept', payload) WHERE run_id = ? AND seq = ?`, runId, seq);
      for (const report of await bothReports(c.log, runId, c.env)) {
        expect(report.divergence, part).toMatchObject({ cause: 'damaged-log', seq });
        expect(report.divergence!.recorded).toContain(`disagrees with the identity recorded beside it in ${part}`);
      }
      tamper(c.dbPath, `UPDATE reqon_events SET payload = json_extract(payload, '$.kept') WHERE run_id = ? AND seq = ?`, runId, seq);
    }
    expect(fullyVerified(await verifyRun(c.log, runId, { env: c.env }))).toBe(true); // restored
  });

  it('a request with its identity removed is said to be compared on its method only', async () => {
    const { c, runId } = await completedRun();
    const seq = seqOf(c.dbPath, runId, `type = 'http.request' AND json_extract(payload, '$.request.method') = 'POST'`);
    tamper(c.dbPath, `UPDATE reqon_events SET payload = json_remove(payload, '$.identity') WHERE run_id = ? AND seq = ?`, runId, seq);
    for (const report of await bothReports(c.log, runId, c.env)) {
      expect(report.ok).toBe(true);
      expect(fullyVerified(report)).toBe(false);
      expect(report.unchecked.join('\n')).toMatch(/1 request\(s\) have no recorded identity .* only their methods were compared/);
      expect(report.unchecked.join('\n')).not.toMatch(/their URLs and bodies were compared/);
    }
  });
});
