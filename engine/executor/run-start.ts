/**
 * Starting runs. A run remembers what it started with (mission text and hash, `--source`,
 * `--env`, the `REQON_*` variables it reads, the auth file's path — never its secrets), so
 * `resume`, the worker and the studio need nothing else; its first event says which log format
 * it records (events.ts, LOG_FORMAT).
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { digestCredentials, givenCredentials } from '../http/given-credentials.js';
import { LOG_FORMAT, type NewEvent, type StoredEvent } from '../log/events.js';
import { CredentialsError, loadCredentialsFile, resolveCredentials, type CredentialsMap } from '../http/credentials.js';
import type { Lease, MissionFiles, NewRun, RunOptions } from '../log/log.js';
import { CommitOutcomeUnknownError, DEFAULT_LEASE_TTL_MS, execute, RunUnavailableError, type EngineDeps, type RunResult } from './execute.js';
import type { MissionModel } from '../steps/mission-model.js';
import { missionHash, modelFor } from './mission-cache.js';
import { refuseUnstartableMission } from './start-checks.js';
import { defaultOwner } from './owner.js';
import { isSensitiveName } from '../env/credential-names.js';
import { LogConnectionError, logUnreachable } from '../log/errors.js';

/** What `startRun` creates, for a caller that creates the run itself (a schedule firing). */
export interface PreparedRun {
  run: NewRun;
  first: NewEvent[];
  owner: string;
  ttlMs: number;
}

/**
 * Checks the mission (MissionInvalidError) and builds the run row and first events of a new run.
 * `byHand`: a run started by hand, refused also for a setup it cannot use (refuseUnusableSetup).
 */
export function prepareNewRun(files: MissionFiles, given: RunOptions, deps: EngineDeps, byHand = false, { scheduled = false } = {}): PreparedRun {
  const hash = missionHash(files);
  const model = modelFor(files, hash);
  // A new run's file stores are in the folder it starts in (a fork's, a schedule firing's too).
  const options: RunOptions = { ...given, env: { ...rememberedVariables(model, given.env, deps.env.vars), ...given.env }, dataDir: resolve(deps.dataDir) };
  // A credentials file that cannot be used is refused before a run exists (CredentialsError) —
  // but a schedule's firing starts its run, which fails at its first request that needs them
  // (execute.ts): refused, the firing was tried again at every poll, said on stderr only, and
  // no failed run showed it nor did the schedule's `retry` see it (helper 91).
  const credentials = options.authFile ? (scheduled ? readableCredentials(options.authFile, deps) : loadCredentialsFile(options.authFile, deps.env.vars)) : undefined;
  if (byHand) refuseUnusableSetup(model, options, credentials, deps);
  const now = deps.env.clock.now();
  const mission = model.mission.name.name;
  const digests = digestCredentials(givenCredentials(model.sources.values(), credentials, deps.env.vars), deps.env.random.id('salt'));
  // Names only: which of the credentials the mission reads this run had (verify's stand-ins).
  const credentialsSet = credentialReadsOf(model).names.filter((name) => options.env[name] !== undefined || (name.startsWith('REQON_') && deps.env.vars[name] !== undefined));
  return {
    run: { runId: deps.env.random.id('run'), mission, missionHash: hash, missionFiles: files, options, createdAt: now },
    first: [{ type: 'run.started', stepPath: '', payload: { mission, missionHash: hash, format: LOG_FORMAT, ...(digests ? { credentials: [digests] } : {}), ...(credentialsSet.length > 0 ? { credentialsSet } : {}) }, recordedAt: now }],
    owner: deps.owner ?? defaultOwner(deps.env),
    ttlMs: deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
  };
}

/** A `REQON_*` setting written into a header's string (`${REQON_X}`) or a request path (`{REQON_X}`). */
const PLACED_VARIABLE = /\{(REQON_[A-Za-z0-9_]+)\}/g;
/** Any name placed so (`${API_TOKEN}` in a source's header reads the run's --env setting). */
const ANY_PLACED_VARIABLE = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The `REQON_*` variables of the starting process that the mission reads (`env("REQON_X")`, a
 * `${REQON_X}` header, a `{REQON_X}` path), as `--env` settings of the run: a resume, a worker
 * on another machine, a verify of an exported run read the values the run started with. Read
 * from each process instead, a resume where one was unset or other failed the run for good with
 * a divergence, and a verify elsewhere said DIVERGED (helper 94). A run stores no secret, so
 * never remembered are: a credential-named variable, and one the mission puts where a credential
 * goes — a credential-named header or query parameter (`Authorization: "Bearer ${REQON_GH_PAT}"`,
 * `?api_key={REQON_K}`; helper 95: such a token was stored and exported in clear). Those are read by
 * each process that carries the run on, redacted from what is recorded, and left out of requests'
 * identities, so a rotated one replays alike. (A value a `let` binds is recorded as data, a
 * credential included: GUARANTEES.) Nor is a variable unset at the start.
 */
function rememberedVariables(model: MissionModel, given: Readonly<Record<string, string>>, vars: Readonly<Record<string, string | undefined>>): Record<string, string> {
  let reads = variableReads.get(model);
  if (!reads) variableReads.set(model, (reads = variablesReadBy(model)));
  const out: Record<string, string> = {};
  for (const name of reads.read) {
    const value = vars[name];
    if (value !== undefined && !Object.hasOwn(given, name) && !isSensitiveName(name) && !reads.secret.has(name)) out[name] = value;
  }
  return out;
}

/** Per mission (the model is cached by its text): a schedule fires one mission many times. */
const variableReads = new WeakMap<MissionModel, VariableReads>();

/** What a mission reads as credentials (credentialReadsOf). */
export interface CredentialReads {
  /** Variables and settings read by a credential's name or where a credential goes, sorted. */
  names: string[];
  /** Of them, those also read elsewhere than where a credential goes: their values may reach what replay compares in clear. */
  readOpenly: string[];
  /** sha256 of each literal typed where a credential goes, sorted (compared, never shown). */
  literals: string[];
}

/**
 * The credentials `model` reads — `REQON_*` variables and the run's `--env` settings by a
 * credential's name or where a credential goes, and literals typed there. Verify holds an edit's
 * against the recorded mission's: which credential a request carries is no part of its identity
 * (a rotated token must replay alike), so an edit that reads another is said to be not checked
 * (helper 96: a header edited from ${REQON_A_TOKEN} to ${REQON_B_TOKEN} verified as a match).
 */
export function credentialReadsOf(model: MissionModel): CredentialReads {
  let reads = credentialReads.get(model);
  if (reads) return reads;
  const { read, secret, open, literals } = variablesReadBy(model, true);
  const names = [...read].filter((name) => secret.has(name) || isSensitiveName(name)).sort();
  reads = { names, readOpenly: names.filter((name) => open.has(name)), literals: [...literals].sort() };
  credentialReads.set(model, reads);
  return reads;
}

/** Per mission, as variableReads: every run's start and every verify ask. */
const credentialReads = new WeakMap<MissionModel, CredentialReads>();

/** The `REQON_*` variables `model` reads (`anyName`: every variable), and those of them it puts where a credential goes. */
interface VariableReads {
  read: Set<string>;
  /** Read at least once where a credential goes (a credential-named header or query value). */
  secret: Set<string>;
  /** Read at least once anywhere else (a body field, a `let`, a condition, a store's record). */
  open: Set<string>;
  literals: Set<string>;
}

function variablesReadBy(model: MissionModel, anyName = false): VariableReads {
  const read = new Set<string>();
  const secret = new Set<string>();
  const open = new Set<string>();
  const literals = new Set<string>();
  /**
   * `inSecret`: inside a value the redactor hides by its name (http/redact.ts rule 1: a header or
   * a query parameter, never a body field, which is recorded as sent). `keysName`: inside a
   * request's `headers:` or `params:`, where an object's keys are such names.
   */
  const visit = (node: unknown, inSecret: boolean, keysName: boolean): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, inSecret, keysName);
      return;
    }
    const n = node as { kind?: string; value?: unknown; callee?: { name?: unknown }; args?: { kind: string; value?: unknown }[]; name?: { value?: unknown }; key?: { name?: unknown } };
    const note = (variable: string, secretHere: boolean) => {
      read.add(variable);
      (secretHere ? secret : open).add(variable);
    };
    if (anyName && inSecret && n.kind === 'String' && typeof n.value === 'string' && n.value !== '' && !n.value.includes('{')) {
      // A credential typed into the mission: kept as a digest, never its text.
      literals.add(createHash('sha256').update(n.value).digest('hex'));
    } else if (n.kind === 'Call' && n.callee?.name === 'env') {
      const arg = n.args?.[0];
      if (arg?.kind === 'String' && typeof arg.value === 'string' && (anyName || arg.value.startsWith('REQON_'))) note(arg.value, inSecret);
      if (arg?.kind === 'String') return; // its name, no literal of the request
    } else if (typeof n.value === 'string' && (anyName ? n.value.includes('{') : n.value.includes('{REQON_'))) {
      // In a path's query (`?api_key={REQON_K}`), the parameter's name says whether it is one.
      const query = n.value.indexOf('?');
      for (const m of n.value.matchAll(anyName ? ANY_PLACED_VARIABLE : PLACED_VARIABLE)) {
        const param = query >= 0 && m.index > query ? /([^?&=]+)=[^&=]*$/.exec(n.value.slice(query, m.index))?.[1] : undefined;
        note(m[1]!, inSecret || (param !== undefined && isSensitiveName(param)));
      }
    }
    // A source's header entry is named by a string literal; a request's headers or params by an object's keys.
    const named = n.kind === 'Property' ? (keysName ? n.key?.name : undefined) : 'value' in n && typeof n.name?.value === 'string' ? n.name.value : undefined;
    const below = inSecret || (typeof named === 'string' && isSensitiveName(named));
    // A path built of parts (`"/repos?access_token=" + env("REQON_GH_PAT")`, or with concat): what
    // follows a credential-named `name=` is that parameter's value (helper 99).
    const parts = n.kind === 'Binary' && (n as { operator?: string }).operator === '+' ? [(n as { left?: unknown }).left, (n as { right?: unknown }).right] : n.kind === 'Call' && n.callee?.name === 'concat' ? (n.args ?? []) : undefined;
    if (parts !== undefined) {
      parts.forEach((part, i) => visit(part, below || followsSecretName(parts[i - 1]), keysName));
      return;
    }
    for (const [field, value] of Object.entries(n)) {
      // Every field, `key:` expressions too (a store's `key: concat(env("REQON_T"), .id)`: helper 99).
      visit(value, below, field === 'headers' || field === 'params' ? true : n.kind === 'Object' || n.kind === 'Property' ? keysName : false);
    }
  };
  visit([model.unit.root, model.unit.mission], false, false);
  return { read, secret, open, literals };
}

/** A string literal ending in a credential-named query parameter's `name=` (`"…?access_token="`). */
function followsSecretName(part: unknown): boolean {
  const p = part as { kind?: string; value?: unknown } | undefined;
  if (p?.kind !== 'String' || typeof p.value !== 'string') return false;
  const name = /[?&]([^?&=]+)=$/.exec(p.value)?.[1];
  return name !== undefined && isSensitiveName(name);
}

/**
 * What a run started by hand (CLI, studio, library) is refused for besides an invalid mission,
 * before anything is sent: a pipeline stage naming an undeclared action; credentials of another
 * type than a source declares (or an auth file entry for an `auth: none` source) — every request
 * of that source would fail on them, in a loop as one tolerated failure per item, exit 0 — and a
 * source document its requests need that cannot be used. A schedule's firing is not refused (worker/schedules.ts would retry the refusal for
 * ever and record nothing): its run fails at the request instead, as a failed run the schedule's
 * `retry` sees.
 */
function refuseUnusableSetup(model: MissionModel, options: RunOptions, credentials: CredentialsMap | undefined, deps: EngineDeps): void {
  refuseUnstartableMission(model, options);
  for (const source of model.mission.sources) {
    resolveCredentials({ source: source.name.name, declared: source.auth?.kind ?? 'none', ...(credentials ? { file: credentials, fileName: options.authFile } : {}), vars: deps.env.vars, required: false });
  }
}

export async function startRun(files: MissionFiles, options: RunOptions, deps: EngineDeps): Promise<RunResult> {
  const prepared = prepareNewRun(files, options, deps, true);
  const { lease } = await createRunResolved(deps, prepared.run, prepared.owner, prepared.ttlMs, prepared.first);
  deps.onRunId?.(prepared.run.runId);
  return execute(
    { runId: prepared.run.runId, model: modelFor(files, prepared.run.missionHash), options: prepared.run.options, lease, recorded: [], ownMission: true },
    deps,
  );
}

/**
 * Creates the run. A connection lost as its creating commit went out leaves the outcome unknown:
 * the server may have committed it and the reply been lost (probe 113 K3: `reqon run` exited 1
 * with no run id for a run that a worker then carried on, and the user's re-run sent its POST
 * again under another key). The run's id was chosen before, so its row is looked up once, on a
 * new connection: there, made by this process, the run goes on under the lease it was made with
 * (its events read back); absent, nothing was made and the loss is thrown as it was; the lookup
 * failing too is RunCreationUnknownError, which names the run to look for. A connection refused
 * outright never carried the commit: nothing was made. (A server still finishing the commit as
 * the lookup reads is not waited for.)
 */
export async function createRunResolved(
  deps: Pick<EngineDeps, 'log' | 'onRunId'>,
  run: NewRun,
  owner: string,
  ttlMs: number,
  first: NewEvent[],
): Promise<{ lease: Lease; events: StoredEvent[] }> {
  const { runId } = run;
  try {
    return await deps.log.createRun(run, owner, ttlMs, first);
  } catch (error) {
    if (!logUnreachable(error) || neverSent(error)) throw error;
    let row: Awaited<ReturnType<EngineDeps['log']['getRun']>>;
    try {
      row = await deps.log.getRun(runId);
    } catch {
      deps.onRunId?.(runId);
      throw new RunCreationUnknownError(runId, error);
    }
    if (row === undefined) throw error;
    if (row.owner !== owner || row.leaseExpiresAt === null) {
      deps.onRunId?.(runId);
      throw new RunUnavailableError(`run ${runId} was made, and the log connection was lost as it was; another process carries it on now`, 'owned');
    }
    return { lease: { runId, owner, epoch: row.leaseEpoch, expiresAt: row.leaseExpiresAt }, events: await deps.log.read(runId) };
  }
}

/** A connection the server refused (or never resolved): no statement went out on it. */
function neverSent(error: unknown): boolean {
  if (error instanceof LogConnectionError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH';
}

/** The log was lost as a run was being created, and could not be asked after whether it was. */
export class RunCreationUnknownError extends CommitOutcomeUnknownError {
  override readonly name = 'RunCreationUnknownError';
  constructor(runId: string, cause: unknown) {
    super(runId, 'created', '', `; if it was, a worker (or \`reqon resume ${runId}\`) carries it on, so do not start the mission again before you know`, cause);
  }
}

/**
 * Executes a run that a schedule firing created (worker/schedules.ts) together with its lease,
 * from its first step — exactly what `startRun` does after `createRun`.
 */
export async function startRunFromSchedule(runId: string, lease: Lease, deps: EngineDeps): Promise<RunResult> {
  const run = await deps.log.getRun(runId);
  if (!run) throw new RunUnavailableError(`no run ${runId} in this log`, 'not-found');
  deps.onRunId?.(runId);
  return execute({ runId, model: modelFor(run.missionFiles), options: run.options, lease, recorded: [], ownMission: true, credentialsAtRequest: true }, deps);
}

/** The --auth file's credentials, or none when it cannot be read (a schedule's firing: see prepareNewRun). */
function readableCredentials(file: string, deps: EngineDeps): CredentialsMap | undefined {
  try {
    return loadCredentialsFile(file, deps.env.vars);
  } catch (error) {
    if (error instanceof CredentialsError) return undefined;
    throw error;
  }
}
