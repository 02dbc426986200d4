/**
 * `reqon events RUN --json | head` stops reading the log when the reader goes away: the pipe's
 * EPIPE ends the process between pages. Before, SQLite's reads resolved at once, no error event
 * was handled until the last page, and the whole run's log was read and printed into a closed
 * pipe (a 100k-event run: ~0.7 s of CPU for 20 lines, measured by the growth bench). Observed
 * without timing: strace counts the pages the CLI reads from the log's file.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtEngine } from '../support/built-engine.js';

const STEPS = 5_000;
const PAGE_BYTES = 4096;
const hasStrace = spawnSync('strace', ['-V']).status === 0;

describe.skipIf(!hasStrace)('reqon events | head', () => {
  let dir: string;
  let db: string;
  let runId: string;
  let cli: string;

  beforeAll(() => {
    cli = builtEngine().cli;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-events-head-'));
    db = path.join(dir, 'log.db');
    const mission = path.join(dir, 'long.vague');
    fs.writeFileSync(
      mission,
      `mission Long {\n  store items: sql("items")\n  action Load {\n    for i in range(0, ${STEPS}) {\n      store { id: i, name: "item ${'x'.repeat(40)}" } -> items { key: .id }\n    }\n  }\n  run Load\n}\n`,
    );
    const run = spawnSync(process.execPath, [cli, 'run', mission, '--db', db], { encoding: 'utf8', cwd: dir });
    expect(run.status, run.stderr).toBe(0);
    const listed = spawnSync(process.execPath, [cli, 'runs', '--json', '--db', db], { encoding: 'utf8', cwd: dir });
    runId = (JSON.parse(listed.stdout) as { runId: string; lastSeq: number }[])[0]!.runId;
  }, 180_000);

  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads a few pages of the log, not the whole run, when the reader closes the pipe after its first lines', async () => {
    const trace = path.join(dir, 'trace.txt');
    const child = spawn('strace', ['-f', '-qq', '-y', '-e', 'trace=pread64', '-o', trace, process.execPath, cli, 'events', runId, '--json', '--db', db], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let first = '';
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        first += chunk.toString();
        if (first.includes('\n')) {
          child.stdout.destroy(); // as `head -n 1` does
          resolve();
        }
      });
    });
    await exited;
    expect(JSON.parse(first.split('\n')[0]!)).toMatchObject({ runId, seq: 1, type: 'run.started' });
    expect(stderr).not.toMatch(/internal error/);
    const dbName = path.basename(db);
    const reads = fs
      .readFileSync(trace, 'utf8')
      .split('\n')
      .filter((line) => line.includes(`pread64(`) && line.includes(`/${dbName}>`));
    const pages = fs.statSync(db).size / PAGE_BYTES;
    // The run is most of the file (4 events per step): reading it all would be about `pages` reads.
    expect(pages).toBeGreaterThan(500);
    expect(reads.length).toBeLessThan(pages / 5);
  }, 120_000);
});
