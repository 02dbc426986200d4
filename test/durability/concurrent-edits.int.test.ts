/**
 * An edit to steps a concurrent branch already ran — a step inserted in a concurrent loop's body,
 * one appended to it after the loop ended in the log, one appended to an action of a parallel
 * stage after the stage ended — is a divergence for verify, `resume --mission` and `fork
 * --mission`, refused before anything is sent or adopted.
 *
 * Before: inside concurrent branches, a step that found no recorded event of its own went live
 * whatever the log still held (another branch might still be replaying). The inserted POSTs were
 * sent and logged, the edit adopted; and an appended step, once adopted, left a log that verify
 * then called "verified". Now a branch may go live only while what the log holds is other
 * branches' events (Journal.goingLive).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { backends, type Backend } from '../support/temp-log.js';
import { describeResult } from './support/cli-build.js';
import { useCliMissions } from './support/cli-missions.js';
import { readRunFacts } from './support/run-facts.js';

const LOOP = `mission ConcurrentEdit {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store notes: sql("concurrent_edit_notes")
  action Sync {
    get "/items"
    for it in response concurrency 3 {
      map it -> Rec { id: .id, v: .v * 2 }
      post "/notes" { body: { id: it.id, v: it.v } }
      store { id: it.id, ok: response.ok } -> notes { key: .id }
    }
    post "/done" { body: { n: 3 } }
  }
  run Sync
}
`;

const PARALLEL = `mission ParallelEdit {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store notes: sql("parallel_edit_notes")
  action A {
    get "/one"
    store { id: "a", v: response.v } -> notes { key: .id }
  }
  action B {
    get "/items"
    store { id: "b", n: length(response) } -> notes { key: .id }
  }
  action C {
    post "/done" { body: { c: 1 } }
    store { id: "c", ok: response.ok } -> notes { key: .id }
  }
  run [A, B] then C
}
`;

function api(): FakeApi {
  return new FakeApi()
    .on('GET /items', { body: [{ id: 'i1', v: 1 }, { id: 'i2', v: 2 }, { id: 'i3', v: 3 }] })
    .on('GET /one', { body: { v: 1 } })
    .on('POST /notes', { status: 201, body: { ok: true } })
    .on('POST /done', { status: 201, body: { ok: true } })
    .on('POST /inserted', { status: 201, body: { ok: true } })
    .on('POST /appended', { status: 201, body: { ok: true } });
}

const missions = useCliMissions();

describe.each(backends)('%s: edits inside concurrent branches that already ran', (backend: Backend) => {
  /**
   * Runs `text` killed at `crashAt`, then checks that `edited` is refused by verify, resume and
   * fork with a divergence at `divergesAt`, nothing sent or written; then the run's own mission
   * carries it to its end.
   */
  async function refused(text: string, crashAt: string, edited: string, divergesAt: RegExp, tables: string[]) {
    const { target, api: server, reqon } = await missions.start(backend, 'reqon-concurrent-edit-', api());
    const file = path.join(target.dir, 'mission.vague');
    const editedFile = path.join(target.dir, 'edited.vague');
    fs.writeFileSync(file, text);
    fs.writeFileSync(editedFile, edited);
    expect(edited).not.toBe(text);
    const killed = await reqon('run', file, '--source', `Api=${server.url}`, '--crash-at', crashAt, '--quiet');
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = /^run (\S+)$/m.exec(killed.stdout)![1]!;
    const before = await readRunFacts(target.target, runId, tables);
    const sent = server.requests.length;

    const verified = await reqon('verify', runId, '--mission', editedFile, '--json');
    expect(verified.code, describeResult(verified)).toBe(1);
    expect((JSON.parse(verified.stdout) as { divergence: { stepPath: string } | null }).divergence?.stepPath).toMatch(divergesAt);

    const resumed = await reqon('resume', runId, '--mission', editedFile, '--quiet');
    expect(resumed.code, describeResult(resumed)).toBe(1);
    expect(resumed.stderr).toMatch(/Non-determinism in run \S+ at step /);
    const forked = await reqon('fork', runId, '--at', String(before.run.lastSeq), '--mission', editedFile, '--quiet');
    expect(forked.code, describeResult(forked)).toBe(1);
    expect(forked.stderr).toMatch(/Non-determinism in run \S+ at step /);

    // Nothing sent, nothing written, the edit not adopted, no fork made.
    expect(server.lines().slice(sent)).toEqual([]);
    const after = await readRunFacts(target.target, runId, tables);
    expect(after.events).toEqual(before.events);
    expect(after.run.missionHash).toBe(before.run.missionHash);
    expect(JSON.parse((await reqon('runs', '--json')).stdout) as unknown[]).toHaveLength(1);

    // The run's own mission carries it on, and then verifies whole.
    const carried = await reqon('resume', runId, '--quiet');
    expect(carried.code, describeResult(carried)).toBe(0);
    const whole = await reqon('verify', runId);
    expect(whole.code, describeResult(whole)).toBe(0);
    return server;
  }

  it('a POST inserted at the top of the loop body, killed mid-loop', async () => {
    const edited = LOOP.replace('      map it -> Rec', '      post "/inserted" { body: { id: it.id } }\n      map it -> Rec');
    const server = await refused(LOOP, 'after-effect:3', edited, /^Sync\/1\[\d\]\/0$/, ['concurrent_edit_notes']);
    expect(server.lines().filter((l) => l === 'POST /inserted')).toEqual([]);
  }, 120_000);

  it('a POST appended to the loop body after the log shows the loop ended', async () => {
    const edited = LOOP.replace('-> notes { key: .id }\n', '-> notes { key: .id }\n      post "/appended" { body: { id: it.id } }\n');
    // Killed as the post-loop POST is answered: the loop's end is in the log.
    const server = await refused(LOOP, 'after-effect:5', edited, /^Sync\/1\[\d\]\/3$/, ['concurrent_edit_notes']);
    expect(server.lines().filter((l) => l === 'POST /appended')).toEqual([]);
  }, 120_000);

  it('a POST appended to an action of a parallel stage after the log shows the stage ended', async () => {
    const edited = PARALLEL.replace('-> notes { key: .id }\n  }\n  action B', '-> notes { key: .id }\n    post "/appended" { body: { a: 1 } }\n  }\n  action B');
    const server = await refused(PARALLEL, 'after-effect:3', edited, /^A\/2$/, ['parallel_edit_notes']);
    expect(server.lines().filter((l) => l === 'POST /appended')).toEqual([]);
  }, 120_000);
});
