/**
 * The output-commit rule, shown at the system-call level on the built CLI: the log is fsync'd
 * before anything leaves the process.
 *
 * `reqon run` runs under `strace -f -y -s 5000 -e trace=fsync,fdatasync,pwrite64,connect,sendto,
 * write,writev` (SQLite writes WAL frames with pwrite64; undici sends requests with writev).
 * For every POST of fixtures/fsync-post.vague (and the PUT, PATCH and DELETE of
 * fixtures/fsync-mutations.vague) the trace must show, in this order: a WAL frame
 * write holding the request's Idempotency-Key (the committed intent), an fsync/fdatasync of the
 * database's -wal file, and the request bytes `POST /…` with that key on a socket. The final
 * "completed" line on stdout is an output too: the WAL is synced after `run.completed` is written
 * and before that line. A file store's write (fixtures/fsync-file-pause.vague) waits for its
 * intent's sync as a request does, and "suspended" for the run.suspended's. A GET-only mission (fixtures/fsync-get.vague) sends every request without
 * any sync after the run was created (a lost read is read again).
 * Needs strace (apt-get install -y strace) and ptrace permission.
 * SQLite only, by nature: the evidence is this process's fdatasync of its own -wal file; on
 * PostgreSQL the sync is the server's (synchronous_commit = on), which no strace of the CLI sees.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeApi } from '../support/fake-api.js';
import { regexSource, walSyncReturned } from '../support/strace.js';
import { builtCli, describeResult, REPO, runCli } from './support/cli-build.js';
import { startMissionApi } from './support/mission-api.js';

let cli: string;
let dir: string;
let api: FakeApi;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-fsync-'));
  api = await startMissionApi();
  for (const route of ['PUT /effects/m-1', 'PATCH /effects/m-2', 'DELETE /effects/m-3']) api.on(route, { status: 200, body: { ok: true } });
}, 180_000);

afterAll(async () => {
  await api?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function straceProblem(): string | undefined {
  try {
    execFileSync('strace', ['-o', '/dev/null', 'true'], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `strace cannot run here (${String(error).split('\n')[0]}); install it with apt-get install -y strace and allow ptrace`;
  }
}

type Call =
  | { kind: 'wal-sync'; line: number }
  | { kind: 'wal-write'; line: number; text: string }
  | { kind: 'request'; line: number; text: string }
  | { kind: 'stdout'; line: number; text: string }
  | { kind: 'file-write'; line: number; text: string };

/** The calls that matter, in trace order. */
function parseTrace(trace: string, dbPath: string): Call[] {
  const wal = `${dbPath}-wal`;
  const calls: Call[] = [];
  const walSync = walSyncReturned(regexSource(wal));
  trace.split('\n').forEach((text, line) => {
    if (walSync(text)) calls.push({ kind: 'wal-sync', line });
    else if (text.includes(`pwrite64(`) && text.includes(`<${wal}>`)) calls.push({ kind: 'wal-write', line, text });
    else if (/\b(write|writev|sendto)\(\d+<(socket|TCP):/.test(text) && /"(GET|POST|PUT|PATCH|DELETE) \//.test(text)) {
      calls.push({ kind: 'request', line, text });
    } else if (/\b(write|pwrite64)\(\d+<[^>]*\/data\/[^>]*\.json[^>]*>/.test(text)) {
      calls.push({ kind: 'file-write', line, text }); // a file store's data (written to a temp file, then renamed)
    } else {
      const out = /\bwrite\(1<[^>]*>, "([^"]*)"/.exec(text);
      if (out) calls.push({ kind: 'stdout', line, text: out[1]! });
    }
  });
  return calls;
}

async function tracedRun(mission: string, name: string, code = 0): Promise<{ calls: Call[]; stdout: string }> {
  const problem = straceProblem();
  expect(problem, problem).toBeUndefined();
  const dbPath = path.join(dir, `${name}.db`);
  const tracePath = path.join(dir, `${name}.trace`);
  const result = await runCli(cli, ['run', path.join(REPO, 'test/durability/fixtures', mission), '--db', dbPath, '--source', `Api=${api.url}`, '--quiet'], {
    cwd: dir,
    env: { REQON_DATA_DIR: path.join(dir, 'data') },
    wrapper: ['strace', '-f', '-y', '-s', '5000', '-e', 'trace=fsync,fdatasync,pwrite64,connect,sendto,write,writev', '-o', tracePath],
  });
  expect(result.code, describeResult(result)).toBe(code);
  return { calls: parseTrace(fs.readFileSync(tracePath, 'utf8'), dbPath), stdout: result.stdout };
}

function indexOf(calls: Call[], predicate: (c: Call) => boolean, what: string): number {
  const i = calls.findIndex(predicate);
  expect(i, `${what} in the trace`).toBeGreaterThanOrEqual(0);
  return i;
}

describe('the log is fsync’d before anything leaves the process', () => {
  it('syncs the WAL after each POST’s intent is written and before its request bytes are sent', async () => {
    const { calls } = await tracedRun('fsync-post.vague', 'post');
    const posts = calls.filter((c): c is Extract<Call, { kind: 'request' }> => c.kind === 'request' && c.text.includes('"POST /effects'));
    expect(posts).toHaveLength(3);
    const keys = new Set<string>();
    for (const post of posts) {
      const key = /Idempotency-Key: (ef_[0-9a-f]+)/i.exec(post.text)?.[1];
      expect(key, `the request carries its Idempotency-Key: ${post.text.slice(0, 300)}`).toBeDefined();
      keys.add(key!);
      const send = calls.indexOf(post);
      // The intent: the first WAL frame write that holds this key (its http.request event row).
      const intent = indexOf(calls, (c) => c.kind === 'wal-write' && c.text.includes(key!), `the WAL write of the intent for ${key}`);
      expect(intent, `intent for ${key} written before its request`).toBeLessThan(send);
      const synced = calls.slice(intent + 1, send).some((c) => c.kind === 'wal-sync');
      expect(synced, `an fsync of the -wal file between the intent for ${key} (trace line ${calls[intent]!.line}) and its request (line ${post.line})`).toBe(true);
    }
    expect(keys.size).toBe(3);

    // Telling the caller the run completed is an output as well.
    const done = indexOf(calls, (c) => c.kind === 'stdout' && c.text.startsWith('completed'), 'the "completed" line');
    const completedWrite = calls.map((c, i) => (c.kind === 'wal-write' && c.text.includes('run.completed') ? i : -1)).filter((i) => i >= 0 && i < done);
    expect(completedWrite.length, 'the run.completed event written to the WAL before the "completed" line').toBeGreaterThan(0);
    expect(calls.slice(completedWrite.at(-1)! + 1, done).some((c) => c.kind === 'wal-sync')).toBe(true);
  });

  it('syncs the WAL after the intent of a PUT, a PATCH and a DELETE and before each is sent, as for a POST', async () => {
    const { calls } = await tracedRun('fsync-mutations.vague', 'mutations');
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const sent = calls.filter((c): c is Extract<Call, { kind: 'request' }> => c.kind === 'request' && c.text.includes(`"${method} /effects/m-`));
      expect(sent, `one ${method} in the trace`).toHaveLength(1);
      const key = /Idempotency-Key: (ef_[0-9a-f]+)/i.exec(sent[0]!.text)?.[1];
      expect(key, `the ${method} carries its Idempotency-Key: ${sent[0]!.text.slice(0, 300)}`).toBeDefined();
      const send = calls.indexOf(sent[0]!);
      const intent = indexOf(calls, (c) => c.kind === 'wal-write' && c.text.includes(key!), `the WAL write of the ${method}'s intent`);
      expect(intent, `the ${method}'s intent written before it is sent`).toBeLessThan(send);
      expect(calls.slice(intent + 1, send).some((c) => c.kind === 'wal-sync'), `an fsync of the -wal file between the ${method}'s intent and its request`).toBe(true);
    }
  });

  it('syncs the WAL after each file-store write\'s intent and before the file is written, and before "suspended" is said', async () => {
    const { calls } = await tracedRun('fsync-file-pause.vague', 'file-pause', 10);
    const files = calls.map((c, i) => (c.kind === 'file-write' && c.text.includes('fsync-files') ? i : -1)).filter((i) => i >= 0);
    expect(files.length, 'the file store\'s writes in the trace').toBeGreaterThanOrEqual(2);
    for (const write of files) {
      // The intent: the last WAL write before the file's that holds a store.intent event.
      const intents = calls.map((c, i) => (c.kind === 'wal-write' && c.text.includes('store.intent') && i < write ? i : -1)).filter((i) => i >= 0);
      expect(intents.length, `a store.intent written to the WAL before the file write at trace line ${calls[write]!.line}`).toBeGreaterThan(0);
      expect(calls.slice(intents.at(-1)! + 1, write).some((c) => c.kind === 'wal-sync'), `an fsync of the -wal file between the intent and the file write at line ${calls[write]!.line}`).toBe(true);
    }
    // "suspended" on stdout tells the caller the run waits: its run.suspended is on disk first.
    const said = indexOf(calls, (c) => c.kind === 'stdout' && c.text.startsWith('suspended'), 'the "suspended" line');
    const suspendedWrite = calls.map((c, i) => (c.kind === 'wal-write' && c.text.includes('run.suspended') && i < said ? i : -1)).filter((i) => i >= 0);
    expect(suspendedWrite.length, 'the run.suspended event written to the WAL before the "suspended" line').toBeGreaterThan(0);
    expect(calls.slice(suspendedWrite.at(-1)! + 1, said).some((c) => c.kind === 'wal-sync')).toBe(true);
  });

  it('sends the requests of a GET-only mission without waiting for any fsync', async () => {
    const { calls, stdout } = await tracedRun('fsync-get.vague', 'get');
    expect(stdout).toMatch(/^run \S+\n/);
    const created = indexOf(calls, (c) => c.kind === 'stdout' && c.text.startsWith('run '), 'the "run ID" line');
    const gets = calls.map((c, i) => (c.kind === 'request' && c.text.includes('"GET /items') ? i : -1)).filter((i) => i >= 0);
    expect(gets).toHaveLength(3);
    // From the run's creation to the last page request: WAL frames may be written, never synced.
    expect(calls.slice(created, gets.at(-1)! + 1).filter((c) => c.kind === 'wal-sync')).toEqual([]);
    // The trace does see this run's syncs: the run's creation, and its completion before the reply.
    expect(calls.slice(0, created).some((c) => c.kind === 'wal-sync')).toBe(true);
    const done = indexOf(calls, (c) => c.kind === 'stdout' && c.text.startsWith('completed'), 'the "completed" line');
    expect(calls.slice(gets.at(-1)!, done).some((c) => c.kind === 'wal-sync')).toBe(true);
  });
});
