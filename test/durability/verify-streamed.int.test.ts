/**
 * `verifyRun` reads a long run as the walk reaches it (a window, as a resume does) where the log
 * can read synchronously, and whole otherwise: both must give the same report, every fact of
 * it. And a log that lost events outside the engine (a deleted row, a lost `run.completed`) or
 * whose recorded effect ids or request identities were changed is never verified (helper 53:
 * a run row saying completed with its `run.completed` deleted verified as "63 of 63 events").
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { forkRun } from '../../engine/executor/fork-run.js';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified, type VerifyReport } from '../../engine/executor/verify-report.js';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { builtCli, openConformance, runCli, type Conformance } from '../conformance/harness.js';
import { overriding } from '../support/log-overrides.js';

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

describe('a run pruned while verify reads it (probe 112 K12)', () => {
  it('is "no run left to verify", never a DAMAGED LOG that sends the user to a backup', async () => {
    const { c, runId } = await completedRun();
    // The log as a prune racing the walk leaves it: after the first window, rows are gone, and
    // so is the run's row (a prune deletes the row first, then the events a chunk at a time).
    let pruned = false;
    const racing = overriding(c.log, {
      getRun: async (id) => (pruned ? undefined : c.log.getRun(id)),
      replayReader: (id, lastSeq, types) => {
        const inner = c.log.replayReader!(id, lastSeq, types);
        return {
          total: inner.total,
          next: (max: number) => {
            const chunk = inner.next(max);
            if (chunk.length > 0 && chunk[0]!.seq > 1 && types.length === 0) {
              pruned = true;
              return chunk.slice(1);
            }
            return chunk;
          },
        };
      },
    });
    await expect(verifyRun(racing, runId, { env: c.env })).rejects.toThrow(new RegExp(`^run ${runId} was pruned while verify read it .*there is no run left to verify$`));
    // The same gap with the run's row still there is damage, as before.
    pruned = false;
    const damaged = overriding(racing, { getRun: (id) => c.log.getRun(id) });
    const report = await verifyRun(damaged, runId, { env: c.env });
    expect(report.divergence?.cause).toBe('damaged-log');
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

  it('forks cut anywhere in them verify whole: every effect id derived again', async () => {
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
      // Every recorded id derived again: a branch's effects are named by its own recorded events.
      expect(fullyVerified(report), `fork at ${at}: ${report.unchecked.join('; ')}`).toBe(true);
    }
  });

  it('a fork whose ids in concurrent branches are not the ones derived now (an older engine\'s) is taken as recorded and named as not checked', async () => {
    c = await openConformance();
    c.api.on('GET /orders', { body: ORDERS.slice(0, 20) });
    c.api.on('POST /shipments', { status: 201, body: { ok: true } });
    const parent = await c.start(c.mission('concurrent', CONCURRENT));
    const last = (await c.log.getRun(parent.runId))!.lastSeq;
    const fork = await forkRun(parent.runId, { atSeq: Math.floor(last / 2) }, c.deps());
    expect(fork.status).toBe('completed');
    // As the older engine could name them: one POST's and one store write's ids from the other run.
    const events = await c.events(fork.runId);
    const post = events.find((e) => e.type === 'http.request' && e.stepPath.includes('[') && (e.payload as { request: { method: string } }).request.method === 'POST' && e.seq > Math.floor(last / 2))!;
    const write = events.find((e) => e.type === 'store.write' && e.stepPath.includes('[') && e.seq > Math.floor(last / 2))!;
    const postId = (post.payload as { effectId: string }).effectId;
    const writeId = (write.payload as { effectId: string }).effectId;
    const db = new Database(c.dbPath);
    db.exec('DROP TRIGGER IF EXISTS reqon_events_append_only_update');
    const renamed = db
      .prepare(`UPDATE reqon_events SET payload = replace(replace(payload, ?, 'ef_00000000000000000000000000000001'), ?, 'ef_00000000000000000000000000000002') WHERE run_id = ? AND (instr(payload, ?) > 0 OR instr(payload, ?) > 0)`)
      .run(postId, writeId, fork.runId, postId, writeId).changes;
    db.close();
    expect(renamed).toBeGreaterThanOrEqual(3);
    for (const report of await bothReports(c.log, fork.runId, c.env)) {
      expect(report.divergence, JSON.stringify(report.divergence)).toBeNull();
      expect(fullyVerified(report)).toBe(false);
      expect(report.unchecked.join('\n')).toMatch(/the effect ids of 2 request\(s\) or store write\(s\) in concurrent branches of this fork/);
    }
  });
});

describe("a fork cut inside a concurrent loop of requests", () => {
  // Helper 55: effects in concurrent branches were named by where the walk's cursor stood, which
  // depends on how the branches interleaved: a fork cut inside this loop named an iteration's GET
  // one way live and another on replay — verify said DIVERGED on the engine's own log, and a
  // resume failed the fork. Its fetch.completed also named another effect than its request.
  const LOOP = `mission L {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  action A {
    for x in [1, 2, 3, 4, 5, 6] concurrency 3 {
      get "/item/{x}"
      post "/ack/{x}" { body: { x: x } }
    }
    post "/done" { body: { ok: true } }
  }
  run A
}
`;
  // Helper 56: under `trace: minimal` a `let` logs nothing, so an id it derives went by no event
  // of its own: the fork named it as live and its POST's body diverged from the copied one.
  const MINIMAL = `mission M {
  trace: minimal
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store out: memory("out")
  action A {
    for x in [1, 2, 3, 4, 5, 6] concurrency 3 {
      let id = generateId()
      post "/ack/{x}" { body: { x: x, id: id } }
      store response -> out { key: id }
    }
  }
  run A
}
`;
  const DELAYS = [0, 50, 10, 30, 5, 40, 20];

  it('every fork verifies whole, names each effect once, and resumes', { timeout: 120_000 }, async () => {
    c = await openConformance();
    for (let x = 1; x <= 6; x++) {
      const answer = async () => {
        await new Promise((done) => setTimeout(done, DELAYS[x]));
        return { status: 200, body: { x } };
      };
      c.api.on(`GET /item/${x}`, answer);
      c.api.on(`POST /ack/${x}`, answer);
    }
    c.api.on('POST /done', { status: 201, body: { ok: true } });
    for (const [name, text] of [['loop', LOOP], ['minimal', MINIMAL]] as const) {
      const parent = await c.start(c.mission(name, text));
      expect(parent.status).toBe('completed');
      const last = (await c.log.getRun(parent.runId))!.lastSeq;
      for (let at = 4; at < last; at += 3) {
        const fork = await forkRun(parent.runId, { atSeq: at }, c.deps());
        expect(fork.status, `${name}: fork at ${at}: ${fork.status === 'failed' ? fork.error.message : ''}`).toBe('completed');
        const report = await verifyRun(c.log, fork.runId, { env: c.env });
        expect(report.divergence, `fork at ${at}: ${JSON.stringify(report.divergence)}`).toBeNull();
        expect(fullyVerified(report), `fork at ${at}: ${report.unchecked.join('; ')}`).toBe(true);
        // A fetch.completed names the effect its request was sent as.
        const events = await c.events(fork.runId);
        const requestIds = new Map(events.filter((e) => e.type === 'http.request').map((e) => [e.stepPath, (e.payload as { effectId: string }).effectId]));
        for (const done of events.filter((e) => e.type === 'fetch.completed')) {
          expect((done.payload as { effectId: string }).effectId, `fork at ${at}, ${done.stepPath}`).toBe(requestIds.get(done.stepPath));
        }
      }
    }
  });
});

describe('logs the engine wrote that the damage checks must pass (helper 57)', () => {
  it("an api_key in the query beside the mission's own value of that name, a read with its own Idempotency-Key, a fork of a fork cut in its copied stretch", async () => {
    c = await openConformance({ vars: { REQON_API_API_KEY: 'longkeyvalue123', REQON_API_API_KEY_QUERY: 'api_key' } });
    c.api.on('GET /one?api_key=mine&api_key=longkeyvalue123', { body: [{ id: 1 }] });
    c.api.on('GET /r?api_key=longkeyvalue123', { body: { ok: true } });
    c.api.on('POST /b?api_key=longkeyvalue123', { status: 201, body: { ok: true } });
    const run = await c.start(c.mission('keyed', `mission Keyed {
  source Api { auth: api_key, base: "http://127.0.0.1:1" }
  action A {
    get "/one?api_key=mine"
    get "/r" { headers: { "Idempotency-Key": "on-a-get" } }
    post "/b" { body: { n: 1 } }
    get "/r"
  }
  run A
}
`));
    expect(run.status, run.status === 'failed' ? run.error.message : '').toBe('completed');
    for (const report of await bothReports(c.log, run.runId, c.env)) {
      expect(report.divergence, JSON.stringify(report.divergence)).toBeNull();
      expect(fullyVerified(report)).toBe(true);
    }
    // A fork of a fork, cut inside the stretch the first fork copied: those events are the run's.
    const last = (await c.log.getRun(run.runId))!.lastSeq;
    const fork = await forkRun(run.runId, { atSeq: last - 3 }, c.deps());
    expect(fork.status).toBe('completed');
    for (const at of [4, 8, last - 4]) {
      const again = await forkRun(fork.runId, { atSeq: at }, c.deps());
      expect(again.status, `at ${at}: ${again.status === 'failed' ? again.error.message : ''}`).toBe('completed');
      expect(fullyVerified(await verifyRun(c.log, again.runId, { env: c.env })), `at ${at}`).toBe(true);
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

  it('cut short anywhere, its run row made to agree: damaged past the cut, both ways, and reqon verify exits 1 (helper 86)', async () => {
    // Before: the walk ran out of log where an unfinished run would stop, and a completed run's
    // row made that "verified" (exit 0, ok: true) at every cut but the very last event.
    const { c, runId } = await completedRun();
    await c.log.close();
    const last = seqOf(c.dbPath, runId, `type = 'run.completed'`);
    const cuts = [5, Math.floor(last / 2), last - 2, last - 1];
    for (const keep of cuts) {
      const copy = path.join(c.dir, `cut-${keep}.db`);
      fs.copyFileSync(c.dbPath, copy);
      const db = new Database(copy);
      db.exec('DROP TRIGGER IF EXISTS reqon_events_append_only_update; DROP TRIGGER IF EXISTS reqon_events_append_only_delete;');
      db.prepare('DELETE FROM reqon_events WHERE run_id = ? AND seq > ?').run(runId, keep);
      db.prepare('UPDATE reqon_runs SET last_seq = ? WHERE run_id = ?').run(keep, runId);
      db.close();
      const log = await openLog(copy);
      try {
        for (const report of await bothReports(log, runId, c.env)) {
          expect(report.ok, `cut at ${keep}`).toBe(false);
          expect(report.divergence, `cut at ${keep}`).toMatchObject({ cause: 'damaged-log', seq: keep + 1 });
          expect(report.divergence!.recorded).toMatch(new RegExp(`its run row says completed, but its log ends at seq ${keep} with [a-z.]+.*, not run\\.completed: events were removed outside the engine`));
        }
      } finally {
        await log.close();
      }
      const verified = await runCli(await builtCli(), ['verify', runId, '--db', copy], { cwd: c.dir });
      expect(verified.code, `cut at ${keep}: ${verified.stdout}${verified.stderr}`).toBe(1);
      expect(verified.stdout).toMatch(new RegExp(`^DAMAGED LOG at seq ${keep + 1}: `));
    }
    c.log = await openLog(c.dbPath); // for the harness's close
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

  it('an event whose payload is not a JSON object: damaged at that seq, both ways; events says which event, never "internal error"', async () => {
    // Helper 61: verify said events were deleted, at the run's last seq; `reqon events` died with a stack trace.
    const { c, runId } = await completedRun();
    const seq = seqOf(c.dbPath, runId, `type = 'store.write' AND json_extract(payload, '$.key') = 'o700'`);
    tamper(c.dbPath, 'UPDATE reqon_events SET payload = ? WHERE run_id = ? AND seq = ?', '{not json', runId, seq);
    for (const report of await bothReports(c.log, runId, c.env)) {
      expect(report.divergence).toMatchObject({ cause: 'damaged-log', seq });
      expect(report.divergence!.recorded).toBe(`the payload of its event ${seq} (store.write) is not a JSON object (changed outside the engine)`);
      expect(report.ok).toBe(false);
    }
    // Valid JSON that is no payload the engine writes (helper 63: `null` crashed show and store).
    const other = seqOf(c.dbPath, runId, `type = 'store.write' AND json_extract(payload, '$.key') = 'o3'`);
    tamper(c.dbPath, 'UPDATE reqon_events SET payload = ? WHERE run_id = ? AND seq = ?', 'null', runId, other);
    for (const report of await bothReports(c.log, runId, c.env)) {
      expect(report.divergence).toMatchObject({ cause: 'damaged-log', seq: other });
    }
    await c.log.close(); // the CLI opens the file itself
    for (const command of [['show', runId], ['store', runId, 'shipped']]) {
      const shown = await runCli(await builtCli(), [...command, '--db', c.dbPath], { cwd: c.dir });
      expect(shown.stderr).not.toMatch(/internal error/);
    }
    const events = await runCli(await builtCli(), ['events', runId, '--db', c.dbPath, '--json'], { cwd: c.dir });
    expect(events.code).toBe(1);
    expect(events.stderr).toMatch(new RegExp(`^reqon: the log of run '${runId}' is damaged: the payload of its event ${other} \\(store\\.write\\) is not a JSON object \\(it is null, not an object\\); it was changed outside the engine — restore the log from a backup\\n$`));
    c.log = await openLog(c.dbPath); // for the harness's close
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
      // Helper 55: a parameter the identity does not name passed as one of the auth parameters it leaves out.
      ['its URL', `json_set(payload, '$.request.url', json_extract(payload, '$.request.url') || (CASE WHEN instr(json_extract(payload, '$.request.url'), '?') > 0 THEN '&' ELSE '?' END) || 'purge=all')`],
      // Helper 55: the key rewritten in the header and beside it alike; it is the effect's id.
      ['its Idempotency-Key (not-the-effect-id', `json_set(payload, '$.request.headers.Idempotency-Key', 'not-the-effect-id', '$.idempotencyKey', 'not-the-effect-id')`],
      // Helper 56: a credential-named parameter, or one shown as [REDACTED] where the source adds none (auth: none).
      ['its URL', `json_set(payload, '$.request.url', json_extract(payload, '$.request.url') || '?token=zzz')`],
      ['its URL', `json_set(payload, '$.request.url', json_extract(payload, '$.request.url') || '?purge=[REDACTED]')`],
      // Helper 56: a write with no key at all, or a second header beside the right one.
      ['its Idempotency-Key (none', `json_remove(payload, '$.request.headers.Idempotency-Key', '$.idempotencyKey')`],
      ['its Idempotency-Key header', `json_set(payload, '$.request.headers.idempotency-key', 'other-key')`],
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

  it("a fetch's recorded completion that its recorded answers do not give diverges", async () => {
    // Helper 56: fetch.completed (the step's response as the studio shows it) was taken unread.
    const { c, runId } = await completedRun();
    const seq = seqOf(c.dbPath, runId, `type = 'fetch.completed'`);
    const edits: [string, string][] = [
      ['its status 404', `json_set(payload, '$.status', 404)`],
      ['its 5 page(s)', `json_set(payload, '$.pages', 5)`],
      ['its value', `json_set(json_remove(payload, '$.valueInAnswer'), '$.value', json('{"forged":true}'))`],
      ['its effect id ef_0', `json_set(payload, '$.effectId', 'ef_00000000000000000000000000000000')`],
    ];
    for (const [part, edit] of edits) {
      tamper(c.dbPath, `UPDATE reqon_events SET payload = json_set(${edit}, '$.kept', payload) WHERE run_id = ? AND seq = ?`, runId, seq);
      for (const report of await bothReports(c.log, runId, c.env)) {
        expect(report.divergence, part).toMatchObject({ seq });
        expect(report.divergence!.recorded, part).toContain(part);
      }
      tamper(c.dbPath, `UPDATE reqon_events SET payload = json_extract(payload, '$.kept') WHERE run_id = ? AND seq = ?`, runId, seq);
    }
    expect(fullyVerified(await verifyRun(c.log, runId, { env: c.env }))).toBe(true); // restored
  });

  it('a format-4 log: a body copy holding [REDACTED] is still compared with the body the mission asks for', async () => {
    // Helper 55: before format 5 an identity's body hash could be of the body with a credential in
    // clear, so its [REDACTED] copy was let through unchecked, edited or not.
    const { c, runId } = await completedRun();
    tamper(c.dbPath, `UPDATE reqon_events SET payload = json_set(payload, '$.format', 4) WHERE run_id = ? AND seq = 1`, runId);
    expect(fullyVerified(await verifyRun(c.log, runId, { env: c.env }))).toBe(true);
    const seq = seqOf(c.dbPath, runId, `type = 'http.request' AND json_extract(payload, '$.request.method') = 'POST'`);
    tamper(c.dbPath, `UPDATE reqon_events SET payload = json_set(payload, '$.request.body', json('{"qty":5000000,"note":"[REDACTED]"}')) WHERE run_id = ? AND seq = ?`, runId, seq);
    for (const report of await bothReports(c.log, runId, c.env)) {
      expect(report.divergence).toMatchObject({ cause: 'damaged-log', seq });
      expect(report.divergence!.recorded).toContain('disagrees with the identity recorded beside it in its body');
    }
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
