/**
 * Shared harness of the §H conformance suite: each mission of assets/conformance runs through the
 * real engine (startRun/resumeRun on a temp SQLite log) against a real FakeApi on 127.0.0.1, its
 * sources pointed there with the `--source NAME=URL` override (RunOptions.sources).
 *
 * Invariant: everything a test creates lives under one fs.mkdtempSync dir and every server it
 * starts is stopped by `close()`; nothing is written into the repository. The CLI is driven from a
 * private build of engine/ in the OS temp dir (keyed by a hash of the engine sources), so test files
 * running in parallel never race on the repository's dist/.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { Env } from '../../engine/env/env.js';
import { createRealEnv } from '../../engine/env/real-env.js';
import { resumeRun, startRun, type EngineDeps, type ResumeOptions, type RunResult } from '../../engine/executor/run-mission.js';
import { verifyRun } from '../../engine/executor/verify.js';
import type { StoredEvent } from '../../engine/log/events.js';
import type { EventLog, MissionFiles, RunOptions } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { tempLogTarget, type Backend } from '../support/temp-log.js';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';
import { builtEngine, type CliResult } from '../support/built-engine.js';
import { FakeApi } from '../support/fake-api.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CONFORMANCE_DIR = path.join(REPO, 'assets/conformance');

export const LANGUAGE_DIR = path.join(REPO, 'assets/language');

/** The mission file `name` (e.g. 'h1') as a run remembers it; `edit` rewrites its text (variants). */
export function missionFiles(name: string, edit?: (text: string) => string, dir: string = CONFORMANCE_DIR): MissionFiles {
  const entry = path.join(dir, `${name}.vague`);
  const files = editedFiles(path.join(CONFORMANCE_DIR, `${name}.vague`), entry, edit);
  if (dir !== CONFORMANCE_DIR) fs.writeFileSync(entry, files.files[0]!.text);
  return files;
}

/** The mission assets/language/`name`.vague as a run remembers it, edited by `edit` when given. */
export function languageMissionFiles(name: string, edit?: (text: string) => string): MissionFiles {
  const entry = path.join(LANGUAGE_DIR, `${name}.vague`);
  return editedFiles(entry, entry, edit);
}

/** `source`'s text, rewritten by `edit` (which must change it: a no-op variant would test the original), as the file `entry`. */
function editedFiles(source: string, entry: string, edit: ((text: string) => string) | undefined): MissionFiles {
  const original = fs.readFileSync(source, 'utf8');
  const text = edit ? edit(original) : original;
  if (edit && text === original) throw new Error(`${path.basename(source)}: the edit changed nothing; the variant would test the original`);
  return { entry, files: [{ path: entry, text }] };
}

export interface ConformanceOptions {
  /** Variables the mission's `env()`, credentials and store configs see (the host's are NOT passed). */
  vars?: Record<string, string | undefined>;
  /** Replace the real env (e.g. a FakeClock); its `vars` win over `vars`. */
  env?: (real: Env) => Env;
  /** The log backend (default sqlite; test/support/temp-log.ts). */
  backend?: Backend;
}

export interface Conformance {
  dir: string;
  dbPath: string;
  dataDir: string;
  log: EventLog;
  env: Env;
  api: FakeApi;
  deps(extra?: Partial<EngineDeps>): EngineDeps;
  /** Starts the mission with every source named in `sources` (default: Api) pointed at the fake API. */
  /** Writes `text` as `NAME.vague` in `dir`: a one-file mission to start. */
  mission(name: string, text: string): MissionFiles;
  start(files: MissionFiles, options?: Partial<RunOptions>, extra?: Partial<EngineDeps>): Promise<RunResult>;
  resume(runId: string, opts: ResumeOptions, extra?: Partial<EngineDeps>): Promise<RunResult>;
  /** A store's records as `{key: record}` (memory stores: the fold of the run's store.write events). */
  store(runId: string, store: string): Promise<Record<string, unknown>>;
  events(runId: string): Promise<StoredEvent[]>;
  /** Asserts that replaying the run against its log reports no divergence. */
  expectVerified(runId: string): Promise<void>;
  close(): Promise<void>;
}

export async function openConformance(options: ConformanceOptions = {}): Promise<Conformance> {
  const target = await tempLogTarget(options.backend ?? 'sqlite', 'reqon-conformance-');
  const { dir } = target;
  /** The --db value: a SQLite file or a PostgreSQL URL. */
  const dbPath = target.target;
  const dataDir = path.join(dir, 'data');
  const api = await new FakeApi().start();
  const real = createRealEnv(options.vars ?? {});
  const env = options.env ? options.env(real) : real;
  const log = await openLog(dbPath);
  const deps = (extra: Partial<EngineDeps> = {}): EngineDeps => ({ log, env, dataDir, progress: () => {}, ...extra });
  return {
    dir,
    dbPath,
    dataDir,
    log,
    env,
    api,
    deps,
    mission: (name, text) => {
      const entry = path.join(dir, `${name}.vague`);
      fs.writeFileSync(entry, text);
      return { entry, files: [{ path: entry, text }] };
    },
    start: (files, opts = {}, extra) =>
      startRun(files, { sources: opts.sources ?? { Api: api.url }, env: opts.env ?? {}, ...(opts.authFile ? { authFile: opts.authFile } : {}) }, deps(extra)),
    resume: (runId, opts, extra) => resumeRun(runId, opts, deps(extra)),
    store: async (runId, store) => recordsOf(MemoryStoreState.fromEvents(await log.read(runId)).list(store)),
    events: (runId) => log.read(runId),
    expectVerified: async (runId) => {
      const report = await verifyRun(log, runId, { env });
      expect(report.divergence).toBeNull();
      expect(report.ok).toBe(true);
    },
    close: async () => {
      await api.stop();
      await log.close();
      await target.drop();
    },
  };
}

/** `[{key, record}]` → `{key: record}`, the shape §H writes stores in. */
export function recordsOf(list: readonly { key: string; record: unknown }[]): Record<string, unknown> {
  return Object.fromEntries(list.map((r) => [r.key, r.record]));
}

/** Writes a JSON credentials file (the `--auth FILE` of a run) into `dir`. */
export function writeAuthFile(dir: string, credentials: unknown): string {
  const file = path.join(dir, 'auth.json');
  fs.writeFileSync(file, JSON.stringify(credentials));
  return file;
}

// ---------------------------------------------------------------------------------------------
// The built CLI

/** The CLI compiled from the current sources (shared build: test/support/built-engine.ts). */
export async function builtCli(): Promise<string> {
  return builtEngine().cli;
}


/** Runs `reqon ARGS` (the built CLI) in `cwd` with only `env` (plus PATH) in its environment. */
export function runCli(cli: string, args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? '', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** `reqon run … --json` output: the `run <ID>` line, then the result as one JSON object. */
export function parseRunOutput(stdout: string): { runId: string; result: RunResult } {
  const lines = stdout.trim().split('\n');
  const first = /^run (\S+)$/.exec(lines[0] ?? '');
  if (!first) throw new Error(`reqon run did not print "run <ID>" first; stdout was:\n${stdout}`);
  return { runId: first[1]!, result: JSON.parse(lines[lines.length - 1]!) as RunResult };
}

/** `reqon store RUN STORE --json` as `{key: record}`. */
export async function cliStore(cli: string, c: Conformance, runId: string, store: string): Promise<Record<string, unknown>> {
  const r = await runCli(cli, ['store', runId, store, '--db', c.dbPath, '--json'], { cwd: c.dir });
  if (r.code !== 0) throw new Error(`reqon store exited ${r.code}: ${r.stderr}`);
  return recordsOf(JSON.parse(r.stdout) as { key: string; record: unknown }[]);
}
