/**
 * `reqon fork RUN_ID --at SEQ`, on the built CLI against a real HTTP server that counts applied
 * effects per Idempotency-Key, with an API whose answers change on every call (a counter in each
 * item), so anything the fork fetched again instead of replaying would show.
 *
 * The fork's log starts with the parent's events up to SEQ and says where it came from; that
 * prefix replays (nothing in it is sent again, `reqon verify` finds no divergence); every effect
 * after the fork point happens once, under a key of the fork's own — also across a crash of the
 * fork and its resume; and the parent's log is exactly as it was.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { openLog } from '../../engine/log/open-log.js';
import { FakeApi } from '../support/fake-api.js';
import { builtCli, describeResult, runCli, runIdOf, type CliResult } from '../durability/support/cli-build.js';

const MISSION = `mission Forks {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: sql("fork_out")

  action Sync {
    get "/items" { paginate: offset(offset, 3) }
    for item in response {
      post "/effects" { body: { id: item.id, served: item.served } }
      store { id: item.id, served: item.served, receipt: response.receipt } -> out { key: .id }
    }
  }

  run Sync
}
`;

const ITEMS = 7;
let cli: string;
let dir: string;
let db: string;
let api: FakeApi;
let served = 0;

function reqon(...args: string[]): Promise<CliResult> {
  const quiet = ['run', 'fork', 'resume'].includes(args[0]!) ? ['--quiet'] : [];
  return runCli(cli, [...args, '--db', db, ...quiet], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
}

async function events(runId: string): Promise<StoredEvent[]> {
  const log = await openLog(db);
  try {
    return await log.read(runId);
  } finally {
    await log.close();
  }
}

const postsOf = (a: FakeApi) => a.requests.filter((r) => r.method === 'POST');
const keyOf = (r: { headers: Record<string, string | string[] | undefined> }) => String(r.headers['idempotency-key']);
const comparable = (e: StoredEvent) => ({ seq: e.seq, type: e.type, stepPath: e.stepPath, payload: e.payload });

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-fork-'));
  db = path.join(dir, 'reqon.db');
  fs.writeFileSync(path.join(dir, 'forks.vague'), MISSION);
  api = new FakeApi();
  const items = Array.from({ length: ITEMS }, (_, i) => `i-${i + 1}`);
  for (let offset = 0; offset <= ITEMS; offset += 3) {
    // A changing answer: every call serves a new `served` counter.
    api.on(`GET /items?offset=${offset}`, () => ({ status: 200, body: items.slice(offset, offset + 3).map((id) => ({ id, served: ++served })) }));
  }
  api.on('POST /effects', (req) => ({ status: 201, body: { receipt: `r-${(req.body as { id: string }).id}-${keyOf(req).slice(-6)}` } }));
  await api.start();
}, 180_000);

afterAll(async () => {
  await api?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('reqon fork', () => {
  let parentId: string;
  let parentEvents: StoredEvent[];
  let forkAt: number;
  let parentKeys: string[];

  it('forks a finished run after its third effect: the prefix replays, the rest happens once under new keys', async () => {
    const parent = await reqon('run', 'forks.vague', '--source', `Api=${api.url}`);
    expect(parent.code, describeResult(parent)).toBe(0);
    parentId = runIdOf(parent);
    parentEvents = await events(parentId);
    parentKeys = postsOf(api).map(keyOf);
    expect(new Set(parentKeys).size).toBe(ITEMS);
    // The fork point: the store write of the third item.
    forkAt = parentEvents.filter((e) => e.type === 'store.write')[2]!.seq;
    const requestsBefore = api.requests.length;

    const fork = await reqon('fork', parentId, '--at', String(forkAt), '--source', 'ignored=1');
    // --source is not an option of fork: commander refuses it (exit 2), nothing is created.
    expect(fork.code, describeResult(fork)).toBe(2);
    expect(api.requests.length).toBe(requestsBefore);

    const forked = await reqon('fork', parentId, '--at', String(forkAt));
    expect(forked.code, describeResult(forked)).toBe(0);
    expect(forked.stdout.split('\n')[0]).toMatch(/^run \S+$/);
    const forkId = runIdOf(forked);
    expect(forkId).not.toBe(parentId);

    // Nothing of the prefix was sent again: no GET, and POSTs only for items 4..7, each once.
    const sent = api.requests.slice(requestsBefore);
    expect(sent.filter((r) => r.method === 'GET')).toEqual([]);
    expect(sent.map((r) => (r.body as { id: string }).id)).toEqual(['i-4', 'i-5', 'i-6', 'i-7']);
    const forkKeys = sent.map(keyOf);
    expect(new Set(forkKeys).size).toBe(4);
    for (const key of forkKeys) {
      expect(parentKeys).not.toContain(key);
      expect(api.applied.get(key)).toBe(1);
    }
    for (const key of parentKeys) expect(api.applied.get(key)).toBe(1);

    // Its log: its own run.started naming the parent, then the parent's events 2..forkAt as recorded.
    const log = await events(forkId);
    const started = log[0] as StoredEvent<'run.started'>;
    expect(started.type).toBe('run.started');
    expect(started.payload.forkedFrom).toEqual({ runId: parentId, atSeq: forkAt, identities: [{ toSeq: forkAt, runId: parentId }] });
    expect(log.slice(1, forkAt).map(comparable)).toEqual(parentEvents.slice(1, forkAt).map(comparable));
    // The prefix's records (served counters from the parent's answers) were replayed, not fetched anew.
    const writes = log.filter((e): e is StoredEvent<'store.write'> => e.type === 'store.write');
    expect(writes.map((w) => w.payload.key)).toEqual(['i-1', 'i-2', 'i-3', 'i-4', 'i-5', 'i-6', 'i-7']);
    expect(writes.slice(0, 3).map((w) => w.payload.record)).toEqual(
      parentEvents.filter((e): e is StoredEvent<'store.write'> => e.type === 'store.write').slice(0, 3).map((w) => w.payload.record),
    );
    expect(log[log.length - 1]!.type).toBe('run.completed');

    // The parent is untouched, and the fork verifies against its own log.
    expect((await events(parentId)).map(comparable)).toEqual(parentEvents.map(comparable));
    const verified = await reqon('verify', forkId);
    expect(verified.code, describeResult(verified)).toBe(0);
  }, 120_000);

  it('a fork that crashes after its first live effect resumes under the same new key, applied once', async () => {
    const before = postsOf(api).length;
    // after-effect counts the prefix's 3 GET pages and 3 POSTs (passed while replaying); the 7th is item 4's POST.
    const crashed = await reqon('fork', parentId, '--at', String(forkAt), '--crash-at', 'after-effect:7');
    expect(crashed.signal, describeResult(crashed)).toBe('SIGKILL');
    const forkId = runIdOf(crashed);
    const first = postsOf(api).slice(before);
    expect(first.map((r) => (r.body as { id: string }).id)).toEqual(['i-4']);

    const resumed = await reqon('resume', forkId);
    expect(resumed.code, describeResult(resumed)).toBe(0);
    const sent = postsOf(api).slice(before);
    expect(sent.map((r) => (r.body as { id: string }).id)).toEqual(['i-4', 'i-4', 'i-5', 'i-6', 'i-7']);
    // The resend of item 4 carried the key the fork recorded for it; the API applied it once.
    expect(keyOf(sent[1]!)).toBe(keyOf(sent[0]!));
    for (const key of new Set(sent.map(keyOf))) {
      expect(parentKeys).not.toContain(key);
      expect(api.applied.get(key)).toBe(1);
    }
    expect((await events(parentId)).map(comparable)).toEqual(parentEvents.map(comparable));
  }, 120_000);

  it('a fork cut between a POST\'s intent and its outcome sends it again under the key it was recorded with, applied once', async () => {
    // The parent's fifth POST (item i-5): its intent is logged, its answer not yet, at the cut.
    const intents = parentEvents.filter((e) => e.type === 'http.request' && (e.payload as { request: { method: string } }).request.method === 'POST');
    const cut = intents[4]!.seq;
    expect(parentEvents.find((e) => e.seq === cut + 1)?.type).not.toBe('http.request');
    const before = postsOf(api).length;
    const forked = await reqon('fork', parentId, '--at', String(cut));
    expect(forked.code, describeResult(forked)).toBe(0);
    const sent = postsOf(api).slice(before);
    expect(sent.map((r) => (r.body as { id: string }).id)).toEqual(['i-5', 'i-6', 'i-7']);
    // i-5 is the parent's effect resent (its key, answered from the API's record: applied once);
    // the ones after the cut are the fork's own.
    expect(keyOf(sent[0]!)).toBe(parentKeys[4]);
    expect(api.applied.get(parentKeys[4]!)).toBe(1);
    for (const r of sent.slice(1)) {
      expect(parentKeys).not.toContain(keyOf(r));
      expect(api.applied.get(keyOf(r))).toBe(1);
    }
    const forkId = runIdOf(forked);
    const receipts = Object.fromEntries(
      (await events(forkId)).filter((e): e is StoredEvent<'store.write'> => e.type === 'store.write').map((w) => [w.payload.key, (w.payload.record as { receipt: string }).receipt]),
    );
    expect(receipts['i-5']).toBe(`r-i-5-${parentKeys[4]!.slice(-6)}`);
    expect((await reqon('verify', forkId)).code).toBe(0);
  }, 120_000);

  it('a fork of a fork keeps each stretch named by the run that recorded it', async () => {
    const forked = await reqon('fork', parentId, '--at', String(forkAt));
    const childId = runIdOf(forked);
    const child = await events(childId);
    const childAt = child.filter((e) => e.type === 'store.write')[4]!.seq;
    const before = postsOf(api).length;
    const grand = await reqon('fork', childId, '--at', String(childAt));
    expect(grand.code, describeResult(grand)).toBe(0);
    const grandLog = await events(runIdOf(grand));
    expect((grandLog[0] as StoredEvent<'run.started'>).payload.forkedFrom?.identities).toEqual([
      { toSeq: forkAt, runId: parentId },
      { toSeq: childAt, runId: childId },
    ]);
    const sent = postsOf(api).slice(before);
    // child: items 4..7 live; grandchild (forked after item 5): items 6 and 7 only.
    expect(sent.map((r) => (r.body as { id: string }).id)).toEqual(['i-6', 'i-7']);
    for (const r of sent) expect(api.applied.get(keyOf(r))).toBe(1);
    expect((await reqon('verify', runIdOf(grand))).code).toBe(0);
  }, 120_000);

  it('--mission: an edit after the fork point carries on with it; an edit of the prefix fails the fork, naming where', async () => {
    const compatible = MISSION.replace('run Sync', 'action After {\n    post "/effects" { body: { id: "after", served: 0 } }\n  }\n\n  run Sync then After');
    fs.writeFileSync(path.join(dir, 'compatible.vague'), compatible);
    const before = postsOf(api).length;
    const ok = await reqon('fork', parentId, '--at', String(forkAt), '--mission', 'compatible.vague');
    expect(ok.code, describeResult(ok)).toBe(0);
    expect(postsOf(api).slice(before).map((r) => (r.body as { id: string }).id)).toEqual(['i-4', 'i-5', 'i-6', 'i-7', 'after']);
    expect((await reqon('show', runIdOf(ok))).stdout).toMatch(/compatible\.vague/);

    const divergent = MISSION.replace('body: { id: item.id, served: item.served }', 'body: { id: item.id, served: item.served, extra: 1 }');
    fs.writeFileSync(path.join(dir, 'divergent.vague'), divergent);
    const sent = postsOf(api).length;
    const bad = await reqon('fork', parentId, '--at', String(forkAt), '--mission', 'divergent.vague');
    expect(bad.code, describeResult(bad)).toBe(1);
    expect(bad.stderr + bad.stdout).toMatch(/[Nn]on-determinism/);
    expect(postsOf(api).length).toBe(sent);
    expect((await events(parentId)).map(comparable)).toEqual(parentEvents.map(comparable));
  }, 120_000);

  it('refuses a fork point the parent does not have, and an unknown run', async () => {
    const beyond = await reqon('fork', parentId, '--at', String(parentEvents.length + 1));
    expect(beyond.code).toBe(2);
    expect(beyond.stderr).toMatch(/has events 1–\d+; the fork point must be one of them/);
    expect((await reqon('fork', parentId, '--at', 'x')).stderr).toMatch(/--at must be a seq/);
    const unknown = await reqon('fork', 'run-nope', '--at', '3');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no run run-nope/);
  }, 60_000);
});
