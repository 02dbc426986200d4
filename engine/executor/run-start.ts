/**
 * Starting runs. A run remembers what it started with (mission text and hash, `--source`,
 * `--env`, the auth file's path — never its secrets), so `resume`, the worker and the studio
 * need nothing else; its first event says which log format it records (events.ts, LOG_FORMAT).
 */
import { resolve } from 'node:path';
import { digestCredentials, givenCredentials } from '../http/given-credentials.js';
import { LOG_FORMAT, type NewEvent } from '../log/events.js';
import { loadCredentialsFile, resolveCredentials, type CredentialsMap } from '../http/credentials.js';
import type { Lease, MissionFiles, NewRun, RunOptions } from '../log/log.js';
import { DEFAULT_LEASE_TTL_MS, execute, RunUnavailableError, type EngineDeps, type RunResult } from './execute.js';
import { readFileSync } from 'node:fs';
import { checkOpenApiDocuments } from '../http/openapi-check.js';
import { spanOf } from '../lang/ast.js';
import type { Diagnostic } from '../lang/diagnostics.js';
import { formatDiagnostics } from '../lang/format.js';
import { didYouMean } from '../lang/suggest.js';
import type { MissionModel } from '../steps/mission-model.js';
import { MissionInvalidError, missionHash, modelFor } from './mission-cache.js';
import { defaultOwner } from './owner.js';

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
export function prepareNewRun(files: MissionFiles, given: RunOptions, deps: EngineDeps, byHand = false): PreparedRun {
  // A new run's file stores are in the folder it starts in (a fork's, a schedule firing's too).
  const options: RunOptions = { ...given, dataDir: resolve(deps.dataDir) };
  const hash = missionHash(files);
  const model = modelFor(files, hash);
  // A credentials file that cannot be used is refused before a run exists (CredentialsError).
  const credentials = options.authFile ? loadCredentialsFile(options.authFile, deps.env.vars) : undefined;
  if (byHand) refuseUnusableSetup(model, options, credentials, deps);
  const now = deps.env.clock.now();
  const mission = model.mission.name.name;
  const digests = digestCredentials(givenCredentials(model.sources.values(), credentials, deps.env.vars), deps.env.random.id('salt'));
  return {
    run: { runId: deps.env.random.id('run'), mission, missionHash: hash, missionFiles: files, options, createdAt: now },
    first: [{ type: 'run.started', stepPath: '', payload: { mission, missionHash: hash, format: LOG_FORMAT, ...(digests ? { credentials: [digests] } : {}) }, recordedAt: now }],
    owner: deps.owner ?? defaultOwner(deps.env),
    ttlMs: deps.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
  };
}

/**
 * A stage with no condition that names an undeclared action (a warning to `reqon check`, E3036,
 * as upstream accepts it) fails the run there, after every stage before it has had its effects:
 * refused before any of them. A stage behind a condition may never run, and is left to fail if it does.
 */
function refuseUndeclaredStages(model: MissionModel): void {
  const file = model.unit.root.file;
  const found: Diagnostic[] = [];
  for (const stage of model.pipeline?.stages ?? []) {
    if (stage.condition) continue;
    for (const name of stage.actions) {
      if (model.actions.has(name.name)) continue;
      const help = didYouMean(name.name, model.actions.keys());
      found.push({
        code: 'E3036',
        severity: 'error',
        message: `Unknown action \`${name.name}\`: the run would fail at this stage after the stages before it had their effects, so it is not started`,
        file,
        span: spanOf(name),
        ...(help ? { help } : {}),
      });
    }
  }
  if (found.length > 0) throw new MissionInvalidError(formatDiagnostics(found, new Map(model.unit.files.map((f) => [f.path, f.text]))));
}

/**
 * A source's OpenAPI document that cannot be used, or a `call` of an operation it lacks
 * (http/openapi-check.ts), refuses the run before it starts — as `reqon check` says — rather than
 * failing it at that call after the steps before it took effect. Read as the run reads it: the
 * text the run remembers, else the file.
 */
function refuseUnusableSpecs(model: MissionModel, options: RunOptions): void {
  if (!model.mission.sources.some((s) => s.spec)) return;
  const read = (file: string): string => model.attachment(file) ?? readFileSync(file, 'utf8');
  // E3062 (no base to take) is a warning for `reqon check`, which cannot know the run's --source;
  // here the run's sources are known, so it is what it then is: every request of the source failing.
  const errors = checkOpenApiDocuments(model.unit, read, new Set(Object.keys(options.sources ?? {})))
    .map((d) => (d.code === 'E3062' ? { ...d, severity: 'error' as const } : d))
    .filter((d) => d.severity === 'error');
  if (errors.length === 0) return;
  throw new MissionInvalidError(formatDiagnostics(errors, new Map(model.unit.files.map((f) => [f.path, f.text]))));
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
  refuseUndeclaredStages(model);
  refuseUnusableSpecs(model, options);
  for (const source of model.mission.sources) {
    resolveCredentials({ source: source.name.name, declared: source.auth?.kind ?? 'none', ...(credentials ? { file: credentials, fileName: options.authFile } : {}), vars: deps.env.vars, required: false });
  }
}

export async function startRun(files: MissionFiles, options: RunOptions, deps: EngineDeps): Promise<RunResult> {
  const prepared = prepareNewRun(files, options, deps, true);
  const { lease } = await deps.log.createRun(prepared.run, prepared.owner, prepared.ttlMs, prepared.first);
  deps.onRunId?.(prepared.run.runId);
  return execute(
    { runId: prepared.run.runId, model: modelFor(files, prepared.run.missionHash), options: prepared.run.options, lease, recorded: [], ownMission: true },
    deps,
  );
}

/**
 * Executes a run that a schedule firing created (worker/schedules.ts) together with its lease,
 * from its first step — exactly what `startRun` does after `createRun`.
 */
export async function startRunFromSchedule(runId: string, lease: Lease, deps: EngineDeps): Promise<RunResult> {
  const run = await deps.log.getRun(runId);
  if (!run) throw new RunUnavailableError(`no run ${runId} in this log`, 'not-found');
  deps.onRunId?.(runId);
  return execute({ runId, model: modelFor(run.missionFiles), options: run.options, lease, recorded: [], ownMission: true }, deps);
}
