/**
 * `reqon worker --parent-pid PID` (how the studio starts its worker) stops once PID is gone. The
 * studio killed with -9 left its worker running on the shared log, reparented to init, with its
 * output going nowhere; a run started afterwards was carried on by that orphan.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli } from '../durability/support/cli-build.js';

let cli: string;
let dir: string;
let workerPid: number | undefined;

beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-worker-parent-'));
}, 180_000);

afterAll(() => {
  if (workerPid !== undefined && alive(workerPid)) process.kill(workerPid, 'SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a worker started with --parent-pid', () => {
  it('runs while its parent lives, and stops once the parent is killed with -9', async () => {
    // The parent: starts the worker as the studio does, says its pid, and lives until killed.
    const parentScript = path.join(dir, 'parent.mjs');
    fs.writeFileSync(
      parentScript,
      `import { spawn } from 'node:child_process';
const worker = spawn(process.execPath, [${JSON.stringify(cli)}, 'worker', '--db', ${JSON.stringify(path.join(dir, 'log.db'))}, '--poll', '50', '--parent-pid', String(process.pid)], { stdio: 'ignore' });
console.log(worker.pid);
setInterval(() => {}, 1000);
`,
    );
    const parent = spawn(process.execPath, [parentScript], { stdio: ['ignore', 'pipe', 'inherit'] });
    workerPid = await new Promise<number>((resolve) => parent.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
    expect(Number.isInteger(workerPid)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(alive(workerPid), 'the worker runs while its parent lives').toBe(true);

    parent.kill('SIGKILL');
    const deadline = Date.now() + 15_000;
    while (alive(workerPid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(workerPid), 'the worker stopped after its parent died').toBe(false);
  }, 60_000);
});
