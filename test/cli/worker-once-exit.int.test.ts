/**
 * What `reqon worker --once` exits with (found by helper 38): a pass whose run failed printed the
 * failure on stderr and exited 0, so cron, which sees only the code, saw a good night. A --once pass
 * now exits 1 when a run it carried failed (or could not be carried on), naming it; 12 when it was
 * stopped (SIGTERM) with a run it carried released unfinished; 0 when each completed or suspended again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf } from '../durability/support/cli-build.js';
import { FakeApi } from '../support/fake-api.js';
import { spawnNode } from '../time/support/processes.js';

let cli: string;
let dir: string;
const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'log.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

/** Suspends on a 1 s timer; woken, it stores (`good`) or asks a port nothing listens on (`bad`: fails). */
const mission = (name: string, after: string) =>
  `mission ${name} {\n  source Api { auth: none, base: "http://127.0.0.1:1" }\n  store s: memory("s")\n  action A {\n    pause { duration: "1s" }\n    ${after}\n  }\n  run A\n}\n`;

beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-worker-once-exit-'));
  fs.writeFileSync(path.join(dir, 'good.vague'), mission('Good', 'store { id: 1 } -> s { key: .id }'));
  fs.writeFileSync(path.join(dir, 'bad.vague'), mission('Bad', 'get "/x" { retry: { maxAttempts: 1 } }'));
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function suspended(file: string): Promise<string> {
  const r = await reqon('run', file, '--quiet');
  expect(r.code, describeResult(r)).toBe(10);
  return runIdOf(r);
}

describe('worker --once', () => {
  it('exits 0 when every run it carried completed', async () => {
    const good = await suspended('good.vague');
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const pass = await reqon('worker', '--once');
    expect(pass.code, describeResult(pass)).toBe(0);
    expect(pass.stderr).toContain(`${good}: completed`);
  });

  it('exits 1 when a run it carried failed, naming it', async () => {
    const good = await suspended('good.vague');
    const bad = await suspended('bad.vague');
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const pass = await reqon('worker', '--once');
    expect(pass.code, describeResult(pass)).toBe(1);
    expect(pass.stderr).toContain(`${good}: completed`);
    expect(pass.stderr).toContain(`worker --once: 1 run(s) it carried failed (${bad})`);
  });
});

describe('worker --once stopped mid-pass (probe 106 K3)', () => {
  it('exits 12, naming the run it released unfinished — not 0, which cron reads as every run ended well', async () => {
    const api = new FakeApi();
    let asked!: () => void;
    const reached = new Promise<void>((resolve) => (asked = resolve));
    api.on('GET /slow', async () => {
      asked();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      return { status: 200, body: { id: 'x' } };
    });
    await api.start();
    try {
      fs.writeFileSync(path.join(dir, 'slow.vague'), mission('Slow', 'get "/slow"\n    store response -> s { key: .id }\n    get "/slow"\n    store response -> s { key: "second" }'));
      const r = await reqon('run', 'slow.vague', '--quiet', '--source', `Api=${api.url}`);
      expect(r.code, describeResult(r)).toBe(10);
      const runId = runIdOf(r);
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const pass = spawnNode(cli, ['worker', '--once', '--db', path.join(dir, 'log.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
      await reached;
      pass.child.kill('SIGTERM');
      const exit = await pass.exited;
      expect(exit.code, exit.stderr).toBe(12);
      expect(exit.stderr).toContain(`worker --once: stopped with 1 run(s) it carried released unfinished (${runId})`);
      expect((await reqon('show', runId, '--json')).stdout).toMatch(/"status":\s*"running"/);
      // Any worker carries it on: the next pass completes it and exits 0.
      const next = await reqon('worker', '--once');
      expect(next.code, describeResult(next)).toBe(0);
      expect(next.stderr).toContain(`${runId}: completed`);
    } finally {
      await api.stop();
    }
  });
});

describe('reqon worker --lease-ttl', () => {
  it('refuses a lease shorter than its renewals can keep, before the log is opened (exit 2)', async () => {
    const db = path.join(dir, 'short-lease.db');
    for (const ttl of ['600', '1000', '2999']) {
      const r = await runCli(cli, ['worker', '--once', '--lease-ttl', ttl, '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
      expect(r.code, describeResult(r)).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^reqon: --lease-ttl ${ttl} is shorter than 3000 ms: the lease is renewed every third of it`));
    }
    expect(fs.existsSync(db)).toBe(false);
    const ok = await runCli(cli, ['worker', '--once', '--lease-ttl', '3000', '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
    expect(ok.code, describeResult(ok)).toBe(0);
  });
});
