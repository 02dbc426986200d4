/**
 * What the run-related commands share: the log named by `--db` (default `$REQON_DB`, else
 * `.reqon/reqon.db` under the working directory), the real environment, and the parsing of
 * repeated `--source NAME=URL` / `--env K=V` flags.
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MissionLoadError } from '../lang/loader.js';
import { suggest } from '../lang/suggest.js';
import { modelFor, readMissionFiles as readMissionFilesFrom } from '../executor/mission-cache.js';
import { createRealEnv } from '../env/real-env.js';
import type { Env } from '../env/env.js';
import { LogConnectionError, LogSetupError, LogTargetError, LogVersionError, type EventLog, type MissionFiles } from '../log/log.js';
import { isLogFailure, LOG_LOCKED_TEXT, logUnreachable } from '../log/errors.js';
import { isPostgresUrl, openLog, otherUrlScheme } from '../log/open-log.js';
import { redactPgUrl } from '../log/postgres/pg-url.js';
import { CrashSpecError, parseCrashSpec, type CrashPlan } from '../journal/crash-points.js';
import { CRASH_POINT_HELP, CRASH_POINTS } from '../journal/effects.js';
import { CredentialsError, loadCredentialsFile, shortSecretWarning } from '../http/credentials.js';
import { CliError } from './cli-error.js';
import { EXIT_FAILED, EXIT_USAGE, type ExitCode } from './exit-codes.js';
import type { CliIo } from './command-module.js';

export const DEFAULT_DB = join('.reqon', 'reqon.db');

export function dbPath(option: unknown): string {
  // `--db "$UNSET"` in a script: not the default log, silently (probe 112 K5).
  if (option === '') throw new CliError('--db is empty: name a log file, or postgres://USER@HOST:PORT/DB (leave --db out for the default, .reqon/reqon.db)', EXIT_USAGE);
  // An empty $REQON_DB is the shell's way to unset it.
  const value = typeof option === 'string' ? option : process.env.REQON_DB || DEFAULT_DB;
  // SQLite's in-memory database is gone when the command ends: a run would promise durability,
  // say "suspended … reqon resume", and leave nothing to resume (probe 112 K1).
  if (value === ':memory:' || /^file::memory:/i.test(value)) {
    throw new CliError(`--db ${value} keeps the log in this process's memory, gone when the command ends: nothing it records would survive — name a log file`, EXIT_USAGE);
  }
  return value;
}

/** `--db` as it may be printed: a postgres:// URL without its password. */
export function dbLabel(path: string): string {
  return isPostgresUrl(path) ? redactPgUrl(path) : path;
}

/**
 * The log `--db` names: a SQLite file path (created if absent) or a postgres:// URL (see
 * log/open-log.ts). `existing`: a command that only reads a log's runs (show, events, verify …)
 * is refused on a SQLite file that does not exist — made there, empty, it answered a typo in
 * `--db` with "no run …" and left a new log and its folders behind.
 */
export async function openCliLog(option: unknown, opts: { existing?: boolean } = {}): Promise<EventLog> {
  const path = logTarget(option);
  if (opts.existing === true && !cliLogExists(path)) {
    throw new CliError(`${path}: no log there (no such file); check --db (or $REQON_DB) — a log is made by the first \`reqon run\``, EXIT_USAGE);
  }
  let log: EventLog;
  try {
    log = await openLog(path);
  } catch (error) {
    throw openFailure(path, error);
  }
  if (!isPostgresUrl(path)) {
    const file = statSync(path, { throwIfNoEntry: false });
    if (file) openedFiles.set(log, { path, dev: file.dev, ino: file.ino });
  }
  return log;
}

/** The SQLite file each log the CLI opened was, by device and inode. */
const openedFiles = new WeakMap<EventLog, { path: string; dev: number; ino: number }>();

/**
 * Why what a command wrote through `log` is not in its file, if it is not: the file was deleted or
 * replaced while the command held it open. SQLite writes on into the open file, gone from the
 * folder, and a run "completed" there, exit 0, was gone when the command ended (probe 112 K3).
 * Undefined while the path still names the file opened (and for PostgreSQL).
 */
export function logFileLost(log: EventLog): string | undefined {
  const opened = openedFiles.get(log);
  if (!opened) return undefined;
  const now = statSync(opened.path, { throwIfNoEntry: false });
  if (now && now.dev === opened.dev && now.ino === opened.ino) return undefined;
  return `the log file ${opened.path} was ${now ? 'replaced' : 'deleted'} while this command wrote to it: what it recorded went with the old file, and nothing can show or resume it`;
}

/** How a command that serves (the worker) waits for a log database that is not up yet. */
export interface WaitForLog {
  progress: (line: string) => void;
  /** Looks before giving up, with exit 1 (undefined: until the database answers or `sleep` says stop). */
  maxLooks?: number;
  /** The delay after the `looks`-th look failed, in ms. */
  delayMs: (looks: number) => number;
  /** Sleeps `ms`; true when the command was asked to stop meanwhile. */
  sleep: (ms: number) => Promise<boolean>;
}

/**
 * openCliLog for a service: while the database cannot be reached (down, restarting, not yet up),
 * says so and looks again after `delayMs`, rather than failing at once. A database that answers
 * no (a password, a database or schema that does not exist, a newer log) fails as openCliLog
 * does. Undefined when asked to stop while waiting.
 */
export async function openCliLogWaiting(option: unknown, wait: WaitForLog): Promise<EventLog | undefined> {
  const path = logTarget(option);
  for (let looks = 1; ; looks++) {
    try {
      const log = await openLog(path);
      if (looks > 1) wait.progress('the log database is reachable: starting');
      return log;
    } catch (error) {
      if (!mayComeUp(error)) throw openFailure(path, error);
      const said = error instanceof Error ? error.message : String(error);
      if (wait.maxLooks !== undefined && looks >= wait.maxLooks) {
        throw new CliError(`${said} (gave up after ${looks} looks)`, EXIT_FAILED);
      }
      const ms = wait.delayMs(looks);
      wait.progress(`${said} (looking again in ${ms / 1000} s)`);
      if (await wait.sleep(ms)) return undefined;
    }
  }
}

/**
 * A log database that may yet come up: not reached at all (refused, no socket, no route, a name
 * not resolved yet, timed out, cut), or answering that it is starting or shutting down (SQLSTATE
 * 08xxx, 57P0x) — not one whose server answered no (28xxx a password, 3D000 no such database) nor
 * one refused on our side (a TLS certificate): those are said at once.
 */
function mayComeUp(error: unknown): boolean {
  if (!logUnreachable(error)) return false;
  const cause = (error instanceof LogConnectionError ? error.cause : error) as { code?: unknown; message?: unknown } | null | undefined;
  const code = cause?.code;
  if (typeof code === 'string') return /^(08|57P0)/.test(code) || NOT_REACHED.has(code);
  return typeof cause?.message === 'string' && /timeout|timed out|terminated|closed/i.test(cause.message);
}

/** Network errors of a server that is down, restarting or not reachable yet. */
const NOT_REACHED: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'ENOENT', 'EAI_AGAIN', 'ENOTFOUND', 'EPIPE']);

/** Whether the log `--db` names may exist: a SQLite file that does, or any PostgreSQL URL (its server says). */
export function cliLogExists(path: string): boolean {
  // A URL of another scheme "exists" here so that opening it says what is wrong with it.
  return isPostgresUrl(path) || otherUrlScheme(path) !== undefined || existsSync(path);
}

function logTarget(option: unknown): string {
  // A SQLite file's folder is made by the log as it opens it, once `--db` is known to be a path.
  return dbPath(option);
}

/** What failing to open `path` says: one line (exit 2) for what the user can fix; anything else as it is. */
export function openFailure(path: string, error: unknown): unknown {
  // A log of a newer engine: say so in one line (exit 2), nothing opened or changed.
  if (error instanceof LogVersionError) return new CliError(`${dbLabel(path)}: ${error.message}`, EXIT_USAGE);
  // A URL of another scheme, another program's SQLite database: one line, exit 2, nothing written.
  if (error instanceof LogTargetError) return new CliError(error.message, EXIT_USAGE);
  // A PostgreSQL log that cannot be reached or set up, or a malformed URL: one line (no password), exit 2.
  if (error instanceof LogConnectionError || error instanceof LogSetupError || (isPostgresUrl(path) && error instanceof Error && /not a valid PostgreSQL URL/.test(error.message))) {
    return new CliError(error.message, EXIT_USAGE);
  }
  // A --db that is no SQLite log (a text file, a folder, a truncated or damaged file): the path
  // and what SQLite said, in one line, exit 2 — nothing was written to it.
  const code = (error as { code?: unknown }).code;
  if (error instanceof Error && error.name === 'SqliteError' && typeof code === 'string' && SQLITE_OPEN_FAILURES.has(code)) {
    return new CliError(`${path}: cannot be opened as a Reqon log: ${error.message} (${code})`, EXIT_USAGE);
  }
  // Locked or not writable before the command did anything: no run was created or carried, so
  // not the mid-command failure's "stays resumable" (exit 1) but one line of what to fix, exit 2.
  if (error instanceof Error && error.name === 'SqliteError' && typeof code === 'string') {
    if (/^SQLITE_(BUSY|LOCKED)/.test(code)) {
      return new CliError(`${path}: ${LOG_LOCKED_TEXT} (${error.message}, ${code}); nothing was done — try again once it lets go (a sqlite3 shell left inside a transaction holds it too)`, EXIT_USAGE);
    }
    if (/^SQLITE_(READONLY|PERM|AUTH)/.test(code)) {
      return new CliError(`${path}: the log cannot be written (${error.message}, ${code}); nothing was done — Reqon needs write access to the file and to its folder, where SQLite keeps the -wal and -shm files beside it`, EXIT_USAGE);
    }
  }
  return error;
}

/**
 * The log refused a command's first write, before any run was made (a file SQLite opened
 * read-only, a lock, a server gone): nothing was done — one line, exit 2, as when it is found so
 * on opening. It was "the log database failed mid-command", exit 1, the code of a failed run,
 * from a `run` that made no run (probe 112 K2). Undefined for any other error.
 */
export function reportRefusedLog(option: unknown, error: unknown, io: CliIo): ExitCode | undefined {
  const refused = openFailure(dbPath(option), error);
  if (refused instanceof CliError) {
    io.stderr(`reqon: ${refused.message}\n`);
    return refused.exitCode;
  }
  // Any other failure of the log before the run's row was there (a statement cut by a timeout, a
  // connection lost and the row then found absent — run-start.ts createResolved): nothing was made.
  if (!isLogFailure(error)) return undefined;
  io.stderr(`reqon: the log database failed before a run was made (${error instanceof Error ? error.message : String(error)}): nothing was done — try again once it is back\n`);
  return EXIT_USAGE;
}

/** `logFileLost` said on stderr, exit 1, in place of the end of a run its log file no longer holds. */
export function reportLostLog(log: EventLog, io: CliIo): ExitCode | undefined {
  const lost = logFileLost(log);
  if (lost === undefined) return undefined;
  io.stderr(`reqon: ${lost}\n`);
  return EXIT_FAILED;
}

/** SQLite's answers to opening a file that is not a (whole) SQLite database. */
const SQLITE_OPEN_FAILURES: ReadonlySet<string> = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT', 'SQLITE_CANTOPEN']);

export function cliEnv(): Env {
  return createRealEnv(process.env);
}

/**
 * `--source NAME=URL`, repeated. A URL with a user name or password is refused: the run
 * remembers its sources, so a password there would be stored; credentials go in `--auth`.
 */
export function collectSources(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const pairs = collectPairs(value, previous);
  const name = value.slice(0, value.indexOf('='));
  // One API per source: a second URL for a name was taken silently, the first one dropped.
  if (Object.hasOwn(previous, name) && previous[name] !== pairs[name]) {
    throw new CliError(`--source ${name} is given twice (${previous[name]} and ${pairs[name]}); give each source one URL`);
  }
  let url: URL | undefined;
  try {
    url = new URL(pairs[name]!);
  } catch {
    // Not a URL at all: refused below, before a run exists (as a run would fail at its first request).
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new CliError(`--source ${name}: ${JSON.stringify(pairs[name])} is not an absolute http(s) URL; give one such as ${name}=http://127.0.0.1:8080/api`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new CliError(`--source ${name}: the URL carries a user name or password, which would be stored with the run; give the URL without them and put the credentials in an --auth file (e.g. {"${name}": {"type": "basic", "username": "…", "password": "…"}})`);
  }
  return pairs;
}

/**
 * Every `--source NAME=URL` must name a source one of the missions declares (names are
 * case-sensitive): an override that matches none would be ignored, and the runs would go to the
 * mission's own base URL — the real API a user meant to point elsewhere. Refused before a run
 * exists. (A worker given no mission has no run to apply one to: a run it resumes or takes over
 * uses the sources it was started with.)
 */
export function checkSourceOverrides(missions: readonly MissionFiles[], sources: Record<string, string>): void {
  const names = Object.keys(sources);
  if (names.length === 0) return;
  if (missions.length === 0) {
    throw new CliError(`--source ${names[0]}: no mission is given to use it (a run that is resumed or taken over uses the sources it was started with)`);
  }
  const declared = [...new Set(missions.flatMap((files) => [...modelFor(files).sources.keys()]))];
  for (const name of names) {
    if (declared.includes(name)) continue;
    const its = declared.length > 0 ? `its sources: ${declared.join(', ')}` : 'it declares none';
    throw new CliError(`--source ${name}: the mission${missions.length > 1 ? 's declare' : ' declares'} no source named "${name}" (${its})`);
  }
}

/**
 * Reads and checks an `--auth` file before any run exists (a bad file must not leave a run
 * behind), warning about credentials too short to be told apart from data. Messages never
 * contain a secret's characters.
 */
export function checkAuthFile(path: string, env: Env, io: CliIo, missions: readonly MissionFiles[] = []): void {
  let credentials;
  try {
    credentials = loadCredentialsFile(path, env.vars);
  } catch (e) {
    if (e instanceof CredentialsError) throw new CliError(e.message);
    throw e;
  }
  for (const [source, entry] of Object.entries(credentials)) {
    const warning = shortSecretWarning(source, entry);
    if (warning) io.stderr(`${warning}\n`);
  }
  refuseMisnamedEntries(path, Object.keys(credentials), missions);
}

/**
 * An entry keyed by no declared source but close to one that declares auth and has no entry of
 * its own (`"api"` for `source Api { auth: bearer }`) is a typo: refused before anything is sent,
 * as `--source api=…` is. It was ignored, and the run sent its requests, POSTs included, without
 * the credentials given (probe 112 K6). Entries far from every source stay allowed: one auth file
 * may serve several missions.
 */
function refuseMisnamedEntries(path: string, entries: readonly string[], missions: readonly MissionFiles[]): void {
  const sources = new Map<string, string>();
  for (const files of missions) {
    let model;
    try {
      model = modelFor(files);
    } catch {
      continue; // A mission that does not load: its diagnostics come when the run starts.
    }
    for (const [name, decl] of model.sources) sources.set(name, decl.auth?.kind ?? 'none');
  }
  const stray = entries.filter((entry) => !sources.has(entry));
  for (const [source, auth] of sources) {
    if (auth === 'none' || entries.includes(source)) continue;
    const near = stray.find((entry) => suggest(entry, [source]) === source);
    if (near !== undefined) {
      throw new CliError(`--auth ${path}: an entry "${near}" names no source of the mission, and source "${source}" (auth: ${auth}) has none: did you mean "${source}"? (source names are case-sensitive)`);
    }
  }
}

/**
 * `--env K=V`, repeated. A name given twice with another value is refused, as a source is: the
 * last one was taken silently (probe 112 K10). The values are not echoed — they may be secrets.
 */
export function collectEnv(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const pairs = collectPairs(value, previous);
  const name = value.slice(0, value.indexOf('='));
  if (Object.hasOwn(previous, name) && previous[name] !== pairs[name]) {
    throw new CliError(`--env ${name} is given twice, with two values; give each name one value`);
  }
  return pairs;
}

/** Collects a repeated `NAME=VALUE` flag into a record (commander's variadic accumulator). */
function collectPairs(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new CliError(`expected NAME=VALUE but got "${value}"`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

/**
 * Reads a mission file or folder into the files a run remembers, with the loader's own rules for
 * which files of a folder belong to the mission. Diagnostics are reported when the run starts.
 */
export function readMissionFiles(path: string): MissionFiles {
  try {
    return readMissionFilesFrom(path);
  } catch (e) {
    if (e instanceof MissionLoadError) throw new CliError(e.message);
    throw e;
  }
}

export function dataDir(): string {
  return resolve(process.env.REQON_DATA_DIR ?? '.reqon-data');
}

/** The `--crash-at` option's help: every point, what it means, and how N counts (journal/effects.ts). */
export const CRASH_AT_HELP =
  'kill this process with SIGKILL the Nth time (default 1st) the run reaches POINT, counted over the run\'s whole progress ' +
  '(replayed passes count but never kill): ' +
  CRASH_POINTS.map((p) => `${p} (${CRASH_POINT_HELP[p]})`).join(', ') +
  ', or random';

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
