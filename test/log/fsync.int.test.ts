/**
 * The output-commit rule, proven at the system-call level: a child process runs a non-durable
 * commit and then a durable one, printing a marker after each, under
 * `strace -f -y -e trace=fsync,fdatasync,pwrite64,write`. A durable commit's WAL must be synced
 * before its marker; the non-durable one must write the WAL without any sync.
 * Needs strace (CI installs it: apt-get install -y strace) and ptrace permission.
 * SQLite only, by nature: on PostgreSQL the sync is the server's, not this process's
 * (test/log/group-commit.int.test.ts checks the synchronous_commit setting per group instead).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walSyncReturned } from '../support/strace.js';
import { buildChild, type ChildBuild } from './build-child.js';
import { tempDir } from './helpers.js';
import { runChild } from './spawn-child.js';

let build: ChildBuild;
let dir: string;
beforeAll(() => {
  build = buildChild();
  dir = tempDir();
});
afterAll(() => {
  build?.cleanup();
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
});

function straceAvailable(): string | undefined {
  try {
    execFileSync('strace', ['-V'], { stdio: 'pipe' });
    execFileSync('strace', ['-o', '/dev/null', 'true'], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `strace cannot run here (${String(error).split('\n')[0]}); install it with apt-get install -y strace and allow ptrace`;
  }
}

interface Call {
  kind: 'sync' | 'wal-write' | 'mark';
  text: string;
}

/** The calls that matter, in order: syncs of the WAL, writes to the WAL, and the child's markers. */
function parseTrace(trace: string): Call[] {
  const calls: Call[] = [];
  const walSync = walSyncReturned('[^>]*-wal');
  for (const line of trace.split('\n')) {
    if (walSync(line)) calls.push({ kind: 'sync', text: line });
    else if (/\bpwrite64\(\d+<[^>]*-wal>/.test(line)) calls.push({ kind: 'wal-write', text: line });
    else {
      const mark = /\bwrite\(1<[^>]*>, "MARK ([a-z-]+)\\n"/.exec(line);
      if (mark) calls.push({ kind: 'mark', text: mark[1]! });
    }
  }
  return calls;
}

function between(calls: Call[], from: string | undefined, to: string): Call[] {
  const start = from === undefined ? 0 : calls.findIndex((c) => c.kind === 'mark' && c.text === from) + 1;
  const end = calls.findIndex((c) => c.kind === 'mark' && c.text === to);
  expect(start, `marker ${from} in trace`).toBeGreaterThanOrEqual(0);
  expect(end, `marker ${to} in trace`).toBeGreaterThan(0);
  return calls.slice(start, end);
}

describe('fsync proof under strace', () => {
  it('syncs the WAL before a durable commit resolves, and not for a non-durable one', async () => {
    const problem = straceAvailable();
    expect(problem, problem).toBeUndefined();
    const dbPath = path.join(dir, 'fsync.db');
    const tracePath = path.join(dir, 'trace.txt');
    const result = await runChild('strace', [
      '-f', '-y', '-e', 'trace=fsync,fdatasync,pwrite64,write', '-o', tracePath,
      process.execPath, build.script, 'fsync', dbPath,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const calls = parseTrace(fs.readFileSync(tracePath, 'utf8'));

    // createRun is durable: its WAL frames are followed by a WAL sync before it resolved.
    const create = between(calls, undefined, 'created');
    const lastWrite = create.map((c) => c.kind).lastIndexOf('wal-write');
    expect(lastWrite).toBeGreaterThanOrEqual(0);
    expect(create.slice(lastWrite).some((c) => c.kind === 'sync')).toBe(true);

    // Non-durable: the commit reached the WAL (so it survives kill -9) without waiting for the disk.
    const nonDurable = between(calls, 'created', 'non-durable');
    expect(nonDurable.some((c) => c.kind === 'wal-write')).toBe(true);
    expect(nonDurable.filter((c) => c.kind === 'sync')).toEqual([]);

    // Durable: written, then synced — exactly one sync, which also covers the non-durable frames.
    const durable = between(calls, 'non-durable', 'durable');
    const kinds = durable.map((c) => c.kind);
    expect(kinds.includes('wal-write')).toBe(true);
    expect(kinds.filter((k) => k === 'sync').length).toBe(1);
    expect(kinds.lastIndexOf('sync')).toBeGreaterThan(kinds.lastIndexOf('wal-write'));

    const stats = JSON.parse(result.stdout.trim().split('\n').pop()!) as { fsyncs: number; commits: number; durableCommits: number };
    expect(stats).toMatchObject({ fsyncs: 2, commits: 2, durableCommits: 1 });
  });
});
