/**
 * Real processes for the time suite: the compiled `reqon` CLI run to completion or kept running
 * (workers), with their output collected, and polling helpers with deadlines. Every process a
 * test spawns is tracked so `killAll()` in `afterEach` leaves none behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface Exited {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<Exited>;
}

const live = new Set<ChildProcess>();

export function spawnNode(script: string, args: string[], opts: { cwd: string; env?: Record<string, string> }): Running {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<Exited>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal, stdout: out, stderr: err });
    });
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Runs to exit, killing it after `timeoutMs`. */
export async function runNode(script: string, args: string[], opts: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<Exited> {
  const p = spawnNode(script, args, opts);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
  try {
    return await p.exited;
  } finally {
    clearTimeout(timer);
  }
}

export function killAll(): void {
  for (const child of live) child.kill('SIGKILL');
}

/** Polls `probe` until it returns a value other than undefined/false, or fails with `what`. */
export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
