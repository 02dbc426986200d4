/**
 * What the run-related commands share: the log named by `--db` (default `$REQON_DB`, else
 * `.reqon/reqon.db` under the working directory), the real environment, and the parsing of
 * repeated `--source NAME=URL` / `--env K=V` flags.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadMission, MissionLoadError } from '../lang/loader.js';
import { createRealEnv } from '../env/real-env.js';
import type { Env } from '../env/env.js';
import { openLog, type EventLog, type MissionFiles } from '../log/log.js';
import { CrashSpecError, parseCrashSpec, type CrashPlan } from '../journal/crash-points.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './command-module.js';

export const DEFAULT_DB = join('.reqon', 'reqon.db');

export function dbPath(option: unknown): string {
  const value = typeof option === 'string' && option !== '' ? option : (process.env.REQON_DB ?? DEFAULT_DB);
  return value;
}

export async function openCliLog(option: unknown): Promise<EventLog> {
  const path = dbPath(option);
  if (!/^postgres(ql)?:\/\//i.test(path)) mkdirSync(dirname(resolve(path)), { recursive: true });
  return openLog(path);
}

export function cliEnv(): Env {
  return createRealEnv(process.env);
}

/** Collects a repeated `NAME=VALUE` flag into a record (commander's variadic accumulator). */
export function collectPairs(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new CliError(`expected NAME=VALUE but got "${value}"`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

/**
 * Reads a mission file or folder into the files a run remembers, with the loader's own rules for
 * which files of a folder belong to the mission. Diagnostics are reported when the run starts.
 */
export function readMissionFiles(path: string): MissionFiles {
  let loaded;
  try {
    loaded = loadMission(resolve(path));
  } catch (e) {
    if (e instanceof MissionLoadError) throw new CliError(e.message);
    throw e;
  }
  const files = loaded.unit?.files ?? [];
  if (files.length === 0) throw new CliError(`cannot read mission "${path}"`);
  return { entry: files[0]!.path, files: files.map((f) => ({ path: f.path, text: f.text })) };
}

export function dataDir(): string {
  return resolve(process.env.REQON_DATA_DIR ?? '.reqon-data');
}

/** `--crash-at POINT[:N]|random` → the plan to arm (saying what `random` picked), or null. */
export function crashPlanOption(option: unknown, env: Env, io: CliIo): CrashPlan | null {
  if (typeof option !== 'string') return null;
  try {
    const { plan, picked } = parseCrashSpec(option, () => env.random.next());
    if (picked) io.stderr(`crash point picked at random: ${plan.point}:${plan.occurrence}\n`);
    return plan;
  } catch (e) {
    if (e instanceof CrashSpecError) throw new CliError(e.message);
    throw e;
  }
}
