/**
 * The built CLI for the durability tests (compiled by test/support/built-engine.ts, with the
 * lease-holder child) and a runner for it.
 */
import { spawn } from 'node:child_process';
import { builtEngine, type CliResult, REPO } from '../../support/built-engine.js';

export { REPO };
export type { CliResult };

/** Absolute path of the compiled lease-holder child (support/lease-holder.ts), built with the CLI. */
export function builtLeaseHolder(): string {
  return builtEngine().file('test/durability/support/lease-holder.ts');
}

/** Absolute path of the compiled `main.js` (test/support/built-engine.ts). */
export function builtCli(): string {
  return builtEngine().cli;
}


export interface CliOptions {
  cwd: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Run under this wrapper, e.g. ['strace', '-f', …]; the node command line is appended. */
  wrapper?: string[];
}

/** Runs `node <built main.js> …args` and collects its output. */
export function runCli(main: string, args: string[], opts: CliOptions): Promise<CliResult> {
  const command = [...(opts.wrapper ?? []), process.execPath, main, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), opts.timeoutMs ?? 60_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A `reqon …` child the test kills (SIGKILL) when it chooses — from inside an API handler, say. */
export interface KillableRun {
  /** Kills the child `afterMs` from now. */
  kill(afterMs?: number): void;
  /** Resolves to the id of the run once the child died of the kill; rejects if it ended otherwise. */
  died: Promise<string>;
}

/** Starts `node <built main.js> …args` (a `reqon run`) for a test that kills it at a moment of its own. */
export function killableRun(main: string, args: string[], opts: CliOptions): KillableRun {
  const child = spawn(process.execPath, [main, ...args], { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const died = new Promise<string>((resolve, reject) =>
    child.on('close', (code, signal) =>
      signal === 'SIGKILL' ? resolve(runIdOf({ code, signal, stdout, stderr })) : reject(new Error(`the run was not killed (exit ${code}):\n${stdout}\n${stderr}`)),
    ),
  );
  return { kill: (afterMs = 0) => void setTimeout(() => child.kill('SIGKILL'), afterMs), died };
}

/** `run <ID>` is the first line of `reqon run`; the id of the run it started. */
export function runIdOf(result: CliResult): string {
  const match = /^run (\S+)$/m.exec(result.stdout);
  if (!match) throw new Error(`no "run ID" line in the output of reqon run:\n${result.stdout}\n${result.stderr}`);
  return match[1]!;
}

/** One line for assertion messages: how a CLI process ended and what it said. */
export function describeResult(result: CliResult): string {
  return `code ${result.code}, signal ${result.signal}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}
