/**
 * Runs of the engine as child processes of the studio: `reqon run …` and `reqon resume …`.
 *
 * Engine runs never execute inside the studio process, so an armed crash point (SIGKILL) kills
 * only the run's own process, exactly as it would from a terminal. A started run names itself on
 * its first stdout line (`run <ID>`, the CLI contract); we parse it, keep draining the pipes (a
 * full pipe would stall the child) and report how the process ended.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { StudioError } from './studio-error.js';
import { LOG_LOCKED_TEXT } from '../log/errors.js';

export interface CliLauncher {
  /** The compiled CLI entry (dist/engine/cli/main.js) or any script with the same contract. */
  cliPath: string;
  cwd: string;
  dbPath: string;
  /** The Node binary; the studio's own by default. */
  nodePath?: string;
}

export interface ExitInfo {
  code: number | null;
  signal: string | null;
}

export interface CliProcess {
  pid: number;
  runId: string;
  args: readonly string[];
  exited: Promise<ExitInfo>;
  /** The last few KB of stderr and stdout, for error messages. */
  output(): string;
  kill(signal?: NodeJS.Signals): boolean;
}

export interface RunArgs {
  missionPath: string;
  sources?: Record<string, string>;
  env?: Record<string, string>;
  crashAt?: string;
}

export function runArgs(launcher: CliLauncher, run: RunArgs): string[] {
  const args = ['run', run.missionPath];
  for (const [name, url] of Object.entries(run.sources ?? {})) args.push('--source', `${name}=${url}`);
  for (const [key, value] of Object.entries(run.env ?? {})) args.push('--env', `${key}=${value}`);
  if (run.crashAt !== undefined) args.push('--crash-at', run.crashAt);
  args.push('--json');
  return args;
}

export function resumeArgs(launcher: CliLauncher, runId: string, opts: { payload?: unknown; crashAt?: string }): string[] {
  const args = ['resume', runId];
  if (opts.payload !== undefined) args.push('--payload', JSON.stringify(opts.payload));
  if (opts.crashAt !== undefined) args.push('--crash-at', opts.crashAt);
  args.push('--json');
  return args;
}

const TAIL_BYTES = 8192;

/**
 * The environment of a CLI child. Inside Electron, execPath is the Electron binary: run it as
 * plain Node, with the same native-module ABI as the app (better-sqlite3 is rebuilt once, for Electron).
 * The log goes by $REQON_DB, never `--db`: a command line is readable by every user of the
 * machine (ps), and a PostgreSQL URL may hold a password.
 */
export function cliEnv(launcher: CliLauncher): NodeJS.ProcessEnv {
  const env = { ...process.env, REQON_DB: launcher.dbPath };
  return process.versions.electron ? { ...env, ELECTRON_RUN_AS_NODE: '1' } : env;
}
const RUN_LINE = /^run\s+([A-Za-z0-9][A-Za-z0-9_.:-]*)\s*$/;

/** The run id on a CLI's first line: `run <ID>`, or a JSON object with `runId`. */
export function parseRunLine(line: string): string | null {
  const text = line.trim();
  const plain = RUN_LINE.exec(text);
  if (plain !== null) return plain[1]!;
  if (text.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { runId?: unknown }).runId === 'string') {
        return (parsed as { runId: string }).runId;
      }
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * Starts the CLI. With `runId` unknown (a `run`), resolves once the first stdout line names the
 * run; rejects with a CliRefusedError (a 'bad-request' with the CLI's message) if it exits 2 (a
 * usage error) first, or 1 (a 'conflict': it refused what was asked of the log), and with
 * 'spawn-failed' (and the process's output) if it cannot be started,
 * exits otherwise or prints something else first. With `runId` given (a `resume`), resolves as
 * soon as the process is spawned.
 */
export function startCli(launcher: CliLauncher, args: string[], knownRunId?: string, extraEnv?: Record<string, string>): Promise<CliProcess> {
  let child: ChildProcess;
  try {
    child = spawn(launcher.nodePath ?? process.execPath, [launcher.cliPath, ...args], {
      cwd: launcher.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: extraEnv === undefined ? cliEnv(launcher) : { ...cliEnv(launcher), ...extraEnv },
    });
  } catch (e) {
    return Promise.reject(new StudioError('spawn-failed', `could not start the reqon CLI (${launcher.cliPath}): ${(e as Error).message}`));
  }
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
  };
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  child.stderr!.on('data', keep);
  const describeCommand = `reqon ${args.join(' ')}`;

  return new Promise<CliProcess>((resolve, reject) => {
    let settled = false;
    let buffered = '';
    const make = (runId: string): CliProcess => ({
      pid: child.pid ?? -1,
      runId,
      args,
      exited,
      output: () => tail,
      kill: (signal = 'SIGKILL') => child.kill(signal),
    });
    child.once('error', (e) => {
      if (settled) return;
      settled = true;
      reject(new StudioError('spawn-failed', `could not start ${describeCommand}: ${e.message}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      keep(chunk);
      if (settled) return;
      buffered += chunk.toString('utf8');
      const newline = buffered.indexOf('\n');
      if (newline === -1) return;
      settled = true;
      const runId = parseRunLine(buffered.slice(0, newline));
      if (runId === null) {
        child.kill('SIGTERM');
        reject(new StudioError('spawn-failed', `${describeCommand} did not name its run on its first line; it printed: ${buffered.slice(0, newline).slice(0, 200)}`));
        return;
      }
      resolve(make(runId));
    });
    if (knownRunId !== undefined) {
      child.once('spawn', () => {
        if (settled) return;
        settled = true;
        resolve(make(knownRunId));
      });
    }
    void exited.then(({ code, signal }) => {
      if (settled) return;
      settled = true;
      const locked = lockedLogError({ code, signal }, tail, `reqon ${args[0] ?? ''}`);
      if (locked) {
        reject(locked);
        return;
      }
      if (signal === null && code === 2) {
        // Exit 2 is the CLI's usage error: the request asked for something it refuses (its own
        // message says what), not a failure to start it.
        reject(new CliRefusedError(`reqon ${args[0] ?? ''} refused the request: ${tail.trim().slice(-800) || '(no output)'}`));
        return;
      }
      if (signal === null && code === 1 && /^reqon: (?!internal error)/m.test(tail)) {
        // Exit 1 before a run is named, with the CLI's own `reqon: …` line: it started and refused
        // what was asked of this log (a fork whose edited mission parts from the copied prefix) —
        // a conflict, not a CLI that could not be started (node exits 1 on a missing script too).
        reject(new CliRefusedError(`reqon ${args[0] ?? ''} refused the request: ${tail.trim().slice(-800) || '(no output)'}`, 'conflict'));
        return;
      }
      const how = signal !== null ? `was killed by ${signal}` : `exited with code ${code}`;
      reject(new StudioError('spawn-failed', `${describeCommand} ${how} before naming its run: ${tail.trim().slice(-800) || '(no output)'}`));
    });
  });
}

/**
 * The CLI exited 2 (a usage error, ARCHITECTURE.md's exit codes) before naming its run: the
 * arguments the request gave were refused — a 400 with the CLI's own message. Exit 2 also says a
 * log could not be opened: one that stayed locked is told by the CLI's own words (LOG_LOCKED_TEXT, a
 * 503 retryable), one that cannot be reached by the service asking its own log (studio-service.ts).
 */
export class CliRefusedError extends StudioError {
  constructor(message: string, code: 'bad-request' | 'conflict' = 'bad-request') {
    super(code, message);
    this.name = 'CliRefusedError';
  }
}

/**
 * A child that exited 2 because another process held the log longer than it waits (the CLI says
 * so in LOG_LOCKED_TEXT's words): not a refusal of what was asked — asking again works once it
 * lets go (503, retryable, as for the studio's own log). Undefined for any other exit.
 */
export function lockedLogError(exit: ExitInfo, output: string, command: string): StudioError | undefined {
  if (exit.signal !== null || exit.code !== 2 || !output.includes(LOG_LOCKED_TEXT)) return undefined;
  return new StudioError('unavailable', `${command} could not write the log: ${output.trim().slice(-800)}`, true);
}

/** What an exit means for a run, in the CLI's exit-code contract. */
export function outcomeOf(exit: ExitInfo): 'completed' | 'failed' | 'suspended' | 'crashed' | 'usage-error' | 'interrupted' | 'exited' {
  if (exit.signal === 'SIGKILL') return 'crashed';
  switch (exit.code) {
    case 0:
      return 'completed';
    case 1:
      return 'failed';
    case 2:
      return 'usage-error';
    case 10:
      return 'suspended';
    case 12:
      return 'interrupted';
    default:
      return 'exited';
  }
}
