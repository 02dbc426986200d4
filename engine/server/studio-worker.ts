/**
 * The studio's scheduler: one `reqon worker` child process over the studio's log
 * (engine/worker/worker.ts behind the CLI's `worker` command), started with the studio and
 * stopped with it. It wakes due timers, takes over runs whose owner died (a killed process, an
 * armed crash, a studio closed mid-run) and claims webhook deliveries — the one scheduler, so the
 * studio keeps no wake-up timers of its own. Like every run, the worker executes outside the
 * studio process; if it exits unexpectedly it is started again, with a growing delay.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Clock } from '../env/env.js';
import { cliEnv, type CliLauncher } from './cli-process.js';

const TAIL_BYTES = 8192;
const RESTART_FIRST_MS = 250;
const RESTART_MAX_MS = 30_000;
/** How long `stop` lets the worker finish its runs' current steps before killing it. */
const STOP_GRACE_MS = 5000;

export interface StudioWorkerOptions {
  launcher: CliLauncher;
  clock: Clock;
  /** How often it looks for due work (`--poll`). */
  pollMs?: number;
  /** Told each time a worker process starts and exits (pid). */
  onStart?(pid: number): void;
  onExit?(pid: number, code: number | null, signal: string | null): void;
}

export class StudioWorker {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private stopped = false;
  private restartMs = RESTART_FIRST_MS;
  private restartTimer: NodeJS.Timeout | null = null;
  private tail = '';

  constructor(private readonly options: StudioWorkerOptions) {}

  /** The worker process's pid, or null while none runs. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** The worker's last output, for error messages. */
  output(): string {
    return this.tail;
  }

  start(): void {
    if (this.stopped || this.child !== null) return;
    const { launcher } = this.options;
    // --parent-pid: should the studio die (kill -9), its worker stops instead of working on alone.
    const args = [launcher.cliPath, 'worker', '--poll', String(this.options.pollMs ?? 200), '--parent-pid', String(process.pid)];
    const child = spawn(launcher.nodePath ?? process.execPath, args, { cwd: launcher.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: cliEnv(launcher) });
    this.child = child;
    const keep = (chunk: Buffer) => {
      this.tail = (this.tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const startedAt = this.options.clock.now();
    this.exited = new Promise<void>((resolve) => {
      child.once('error', () => undefined);
      child.once('close', (code, signal) => {
        if (this.child === child) this.child = null;
        if (child.pid !== undefined) this.options.onExit?.(child.pid, code, signal);
        resolve();
        // Exit 2 is a usage error: this CLI cannot host a worker (or the log is refused); starting it again would not help.
        if (this.stopped || code === 2) return;
        // A worker that ran a while before it died starts again at once; one that dies on start backs off.
        this.restartMs = this.options.clock.now() - startedAt > 10_000 ? RESTART_FIRST_MS : Math.min(RESTART_MAX_MS, this.restartMs * 2);
        this.restartTimer = setTimeout(() => {
          this.restartTimer = null;
          this.start();
        }, this.restartMs);
        this.restartTimer.unref();
      });
    });
    if (child.pid !== undefined) this.options.onStart?.(child.pid);
  }

  /** Kills the worker process (its runs die with it); it is started again, and takes them over. */
  kill(): boolean {
    return this.child?.kill('SIGKILL') ?? false;
  }

  /** SIGTERM: each run finishes its current step and is released; killed if it takes too long. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer !== null) clearTimeout(this.restartTimer);
    const child = this.child;
    if (child === null) return;
    child.kill('SIGTERM');
    const grace = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await this.exited;
    clearTimeout(grace);
  }
}
