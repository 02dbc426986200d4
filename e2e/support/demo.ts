/**
 * Real runs for the specs that need the executor: the demo API (assets/demo/demo-api.mjs, which
 * counts requests and effects per idempotency key) started in this process, and the compiled CLI
 * (`reqon run …`) against the spec's temp database.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './seed-runs.js';
import { CLI_PATH } from './studio.js';

export interface DemoApi {
  url: string;
  stats: () => { requests: number; effects: number; keys: Record<string, { requests: number; effects: number }> };
  close: () => Promise<void>;
}

export async function startDemoApi(): Promise<DemoApi> {
  const file = pathToFileURL(path.join(REPO_ROOT, 'assets', 'demo', 'demo-api.mjs')).href;
  // A non-literal specifier: the module is plain JavaScript with JSDoc types only.
  const mod = (await import(file)) as { startDemoApi: (o?: { port?: number }) => Promise<DemoApi> };
  return mod.startDemoApi({ port: 0 });
}

export function requireCli(): void {
  if (!fs.existsSync(CLI_PATH)) {
    throw new Error(`${CLI_PATH} is missing: build the engine first (npm run build). This spec drives real runs through the CLI.`);
  }
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  runId: string | null;
}

export function runCli(args: string[], cwd: string): Promise<CliResult> {
  requireCli();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, runId: /^run (\S+)/m.exec(stdout)?.[1] ?? null });
    });
  });
}

/** Runs the demo mission to completion (waiting out its 3 s pause with `resume`). */
export async function completedDemoRun(dbPath: string, cwd: string, api: DemoApi): Promise<string> {
  const mission = path.join(REPO_ROOT, 'assets', 'demo', 'orders.vague');
  const first = await runCli(['run', mission, '--source', `Shop=${api.url}`, '--db', dbPath], cwd);
  if (!first.runId) throw new Error(`reqon run printed no run id (exit ${first.code}): ${first.stdout}\n${first.stderr}`);
  let last = first;
  for (let i = 0; i < 10 && last.code === 10; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    last = await runCli(['resume', first.runId, '--db', dbPath], cwd);
  }
  if (last.code !== 0) throw new Error(`the demo run ${first.runId} did not complete (exit ${last.code}): ${last.stdout}\n${last.stderr}`);
  return first.runId;
}
