/**
 * `reqon verify`: replay a run against its log with no effects at all — no request leaves, no
 * store is written, nothing is appended — and report where the mission (the one the run started
 * with, or an edited one) and the log part ways, if they do.
 */
import type { Env, HttpTransport } from '../env/env.js';
import { identitiesOf } from '../journal/fork-identity.js';
import { Journal, ReplayExhausted } from '../journal/journal.js';
import { NondeterminismError } from '../journal/nondeterminism-error.js';
import { LOG_FORMAT, logFormatOf, type StoredEvent } from '../log/events.js';
import type { EventLog, MissionFiles } from '../log/log.js';
import type { VerifyEntry, VerifyReport } from './verify-report.js';
import { createHash } from 'node:crypto';
import { REDACTED } from '../http/redact.js';
import { HttpRuntime } from '../steps/http-runtime.js';
import { StoreRuntime } from '../steps/store-runtime.js';
import { CrashInjector } from '../journal/crash-points.js';
import { Executor } from './executor.js';
import { credentialEnvValues } from '../env/mission-env.js';
import { credentialNamesOf } from '../env/credential-names.js';
import { RunUnavailableError } from './execute.js';
import { modelFor, recordedModelOf, withRememberedSpecs } from './mission-cache.js';
import type { MissionModel } from '../steps/mission-model.js';
import type { CircuitBreakerConfig, FetchOptions } from '../lang/ast.js';

const META = new Set(['run.started', 'run.resumed']);

/** A transport that refuses: verify must never reach the network. */
const NO_NETWORK: HttpTransport = {
  send: () => Promise.reject(new Error('verify never sends requests')),
};

export async function verifyRun(
  log: EventLog,
  runId: string,
  opts: {
    missionFiles?: MissionFiles;
    env: Env;
    /** Replay this prefix of the run's log instead of all of it (what a fork copies). */
    events?: readonly StoredEvent[];
  },
): Promise<VerifyReport> {
  const run = await log.getRun(runId);
  if (!run) throw new RunUnavailableError(`no run ${runId} in this log`, 'not-found');
  const files = opts.missionFiles ? withRememberedSpecs(opts.missionFiles, run.missionFiles) : run.missionFiles;
  const model = modelFor(files);
  const events = opts.events ?? (await log.read(runId));
  const format = logFormatOf(events);
  if (format > LOG_FORMAT) {
    throw new RunUnavailableError(
      `run ${runId} was recorded in log format ${format} by a newer engine; this one reads formats 1–${LOG_FORMAT} and cannot verify it`,
      'unreadable',
    );
  }
  const env: Env = { ...opts.env, http: NO_NETWORK };
  const journal = new Journal(null, null, runId, events, env.clock, { verifyOnly: true, recordAsked: true, identities: identitiesOf(events[0]) });
  const recordedBy = opts.missionFiles ? recordedModelOf(run.missionFiles) : undefined;
  const executor = new Executor({
    runId,
    model,
    journal,
    env,
    crash: new CrashInjector(null),
    stores: new StoreRuntime(model, null, env, {
      dataDir: '.',
      authJson: undefined,
      httpTimeoutMs: 1,
      ...(recordedBy ? { recordedBy } : {}),
    }),
    // Redacted as the run redacted them: a credential-named setting in a URL or body is in the log as [REDACTED].
    http: new HttpRuntime(model, env, {
      sources: run.options.sources,
      extraSecrets: credentialEnvValues(run.options.env, env.vars, credentialNamesOf(format)),
      progress: () => {},
      logFormat: format,
    }),
    runEnv: run.options.env,
    lastSync: async () => undefined,
    inbox: async () => [],
    progress: () => {},
  });

  const original: VerifyEntry[] = events.filter((e) => !META.has(e.type)).map(entryOf);
  let divergence: VerifyReport['divergence'] = null;
  let logEnd: ReplayExhausted | undefined;
  try {
    const end = await executor.run();
    // The run's closing event is written by the caller of the walk, not by a step: ask for it here.
    if (end.status === 'completed') journal.take('', 'run.completed');
    else if (end.status === 'failed') journal.take('', 'run.failed');
    journal.assertFullyConsumed();
  } catch (error) {
    if (error instanceof NondeterminismError) {
      const index = journal.asked.length;
      const edited = opts.missionFiles !== undefined;
      divergence = {
        index,
        seq: error.seq ?? 0,
        stepPath: error.stepPath,
        recorded: error.recorded,
        asked: error.asked,
        explanation: explain(error, edited),
        cause: edited ? 'edit' : 'nondeterminism',
        ...(error.detail?.line !== undefined ? { line: error.detail.line } : {}),
        ...(error.detail ? { change: error.detail.change } : {}),
      };
    } else if (error instanceof ReplayExhausted) {
      logEnd = error;
    } else {
      throw error;
    }
  }
  const replayed: VerifyEntry[] = journal.asked.map((a) => ({ seq: a.seq, stepPath: a.stepPath, type: a.type, effectId: a.effectId }));
  const unchecked = [...uncheckedBy(format, events), ...unplannedWrites(recordedBy ?? model, events)];
  if (recordedBy) unchecked.push(...unmeasuredLimits(recordedBy, model, events), ...untracedPureSteps(recordedBy));
  // The walk stopped at the log's end with recorded events it never asked for: they were not
  // compared with anything, so they are said to be unchecked rather than passed as matching.
  const unreached = logEnd ? journal.unreached() : undefined;
  if (logEnd && unreached) {
    unchecked.push(
      `${unreached.count} recorded event(s) from seq ${unreached.first.seq} (${unreached.first.type} at ${unreached.first.stepPath || '(run)'}): ` +
        `the replay reached the end of the log at ${logEnd.stepPath || '(run)'} before it asked for them`,
    );
  }
  return { runId, ok: divergence === null, original, replayed, divergence, unchecked, runStatus: run.status };
}

/**
 * Throws the NondeterminismError of a replay of `runId`'s log (or of `events`, a prefix of it)
 * against `missionFiles`, if they part: what an edited mission must pass before a run carries on
 * with it (resume --mission) or a fork is made with it — before anything is sent or adopted.
 * `advise` words what to do about it, given the seq where they part (resuming's advice otherwise).
 */
export async function assertReplays(
  log: EventLog,
  runId: string,
  opts: { missionFiles: MissionFiles; env: Env; events?: readonly StoredEvent[]; advise?: (divergedAt: number | null) => string },
): Promise<void> {
  const d = (await verifyRun(log, runId, opts)).divergence;
  if (!d) return;
  const detail = d.change ? { ...(d.line !== undefined ? { line: d.line } : {}), change: d.change } : undefined;
  throw new NondeterminismError(runId, d.stepPath, d.seq, d.recorded, d.asked, detail, ...(opts.advise ? [opts.advise(d.seq)] : []));
}

/** headersSha256 of a request the mission gives no headers. */
const NO_HEADERS_SHA256 = createHash('sha256').update('{}').digest('hex');

/** What a log of `format` (and its requests' recorded identities) does not let a replay check. */
function uncheckedBy(format: number, events: readonly StoredEvent[]): string[] {
  if (format < 2) {
    return [
      `requests' URLs and bodies: this run was recorded before request identities (log format ${format}); only their methods were compared`,
    ];
  }
  const identities = events.filter((e) => e.type === 'http.request').map((e) => (e as StoredEvent<'http.request'>).payload.identity);
  const headerless = identities.filter((i) => i?.headersSha256 === undefined).length;
  const sourceless = identities.filter((i) => i?.source === undefined).length;
  const out: string[] = [];
  if (headerless > 0) out.push(`requests' headers: ${headerless} request(s) were recorded by an engine before header identities; their URLs and bodies were compared, their headers not`);
  // Two sources may share a base URL under different credentials: without the name, a request moved to the other source was not caught.
  // Values of credential-named parameters and headers (redacted by name in the URL and headers)
  // entered identities later; a request that may have had some, recorded before, was not compared
  // on them: one whose identity URL shows a redaction, or that had mission headers at all.
  const unnamed = identities.filter((i) => i !== undefined && i.namedValuesSha256 === undefined && (i.url.includes(REDACTED) || (i.headersSha256 !== undefined && i.headersSha256 !== NO_HEADERS_SHA256))).length;
  if (unnamed > 0) {
    out.push(
      `credential-named parameters and headers: ${unnamed} request(s) were recorded by an engine before their values entered identities; an edit of a \`*_token\` parameter or a \`*Token\` header of theirs was not caught`,
    );
  }
  if (sourceless > 0) out.push(`requests' sources: ${sourceless} request(s) were recorded by an engine before source identities; which source each went through was not compared`);
  return out;
}

/**
 * Writes recorded before `store.write` held their planned record: an upsert's (what it stored is
 * a merge) and a file or PostgREST store's (what it keeps may hold more). Their planned records
 * were checked to be contained in what was stored, so a field an edit dropped was not caught.
 */
function unplannedWrites(recordedBy: MissionModel, events: readonly StoredEvent[]): string[] {
  let count = 0;
  for (const e of events) {
    if (e.type !== 'store.write') continue;
    const { op, store, planned } = (e as StoredEvent<'store.write'>).payload;
    if (op === 'delete' || planned !== undefined) continue;
    const kind = recordedBy.stores.get(store)?.type.kind;
    if (op === 'upsert' || kind === 'file' || kind === 'postgrest') count++;
  }
  if (count === 0) return [];
  return [
    `store records: ${count} upsert(s) or write(s) to file or PostgREST stores were recorded by an engine before their planned records were logged; each planned record was checked to be contained in what was stored, so a field an edit dropped was not caught`,
  ];
}

/**
 * An edit of a source's `timeout` or `maxResponseBytes` decides whether a recorded answer would
 * have come at all, and the log holds neither how long an answer took to its last byte nor its
 * size on the wire: its answers were not measured against the edit, which is said, not passed.
 * Nor is an edit of its `circuitBreaker` (whether a request would have gone out at all).
 */
/**
 * An edited mission checked against a run recorded under `trace: minimal`: its pure steps left no
 * events, so their values were not compared — said, not passed.
 */
function untracedPureSteps(recordedBy: MissionModel): string[] {
  if (recordedBy.mission.trace?.mode !== 'minimal') return [];
  return [
    'the values of the pure steps (let, map, apply, validate): the run was recorded under `trace: minimal`, which logs none, so an edit of one is compared only where it changes a request or a store write',
  ];
}

function unmeasuredLimits(recordedBy: MissionModel, model: MissionModel, events: readonly StoredEvent[]): string[] {
  const answered = new Set<string>();
  for (const e of events) {
    if (e.type !== 'http.request') continue;
    const source = (e as StoredEvent<'http.request'>).payload.identity?.source;
    if (source !== undefined) answered.add(source);
  }
  const out: string[] = [];
  for (const [name, source] of model.sources) {
    const was = recordedBy.sources.get(name);
    if (!was || !answered.has(name)) continue;
    for (const setting of ['timeout', 'maxResponseBytes', 'retry timeout'] as const) {
      const before = setting === 'retry timeout' ? was.retry?.timeout : was[setting];
      const after = setting === 'retry timeout' ? source.retry?.timeout : source[setting];
      if (before === after) continue;
      out.push(
        `source ${name}'s ${setting} (${before ?? 'the default'} → ${after ?? 'the default'}): its recorded answers were not measured against the edit, as the log holds neither their time to the last byte nor their size on the wire`,
      );
    }
    // The replay takes the recorded breaker's decisions (requests it let through, attempts it
    // refused) as they were; whether the edited breaker would have decided the same is not asked.
    const before = breakerSettings(was.circuitBreaker);
    const after = breakerSettings(source.circuitBreaker);
    if (before !== after) {
      out.push(
        `source ${name}'s circuitBreaker (${before} → ${after}): the requests it let through and the attempts it refused were replayed as recorded, not decided again by the edited breaker`,
      );
    }
  }
  // A request's own `timeout`, or its `retry`'s, over the source's: the same, request by request.
  const requested = new Set<string>();
  for (const e of events) if (e.type === 'http.request') requested.add(e.stepPath.split('/')[0]!);
  const recorded = requestTimeouts(recordedBy);
  for (const [action, steps] of requestTimeouts(model)) {
    const before = recorded.get(action);
    if (!requested.has(action) || before === undefined || before.join() === steps.join()) continue;
    out.push(
      `the request timeouts of action ${action} ([${before.join('; ')}] → [${steps.join('; ')}]): its recorded answers were not measured against the edit, as the log holds no answer's time to the last byte`,
    );
  }
  return out;
}

/**
 * Each action's requests' own timeouts (`timeout:`, and `retry: { timeout }`), in the order they
 * are written — a walk of its steps' tree that takes every `get`/`post`/… and `call`.
 */
function requestTimeouts(model: MissionModel): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, action] of model.actions) {
    const found: string[] = [];
    const visit = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      if (Array.isArray(node)) {
        for (const item of node) visit(item);
        return;
      }
      const o = node as { kind?: unknown; options?: FetchOptions; operation?: unknown };
      if ((o.kind === 'Fetch' || (o.kind === 'Call' && o.operation !== undefined)) && o.options) {
        found.push(`timeout ${o.options.timeout ?? 'as the source'}, retry timeout ${o.options.retry?.timeout ?? 'as the source'}`);
      }
      for (const value of Object.values(node)) visit(value);
    };
    visit(action.steps);
    out.set(name, found);
  }
  return out;
}

/** A source's breaker settings as written, where they are in the file left out: `none` without one. */
function breakerSettings(breaker: CircuitBreakerConfig | undefined): string {
  if (!breaker) return 'none';
  const { optionSpans: _spans, start: _start, end: _end, ...settings } = breaker;
  const shown = Object.entries(settings)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, value]) => `${key}: ${String(value)}`);
  return `{ ${shown.join(', ')} }`;
}

function entryOf(e: StoredEvent): VerifyEntry {
  const effect = (e.payload as { effectId?: unknown }).effectId;
  return { seq: e.seq, stepPath: e.stepPath, type: e.type, effectId: typeof effect === 'string' ? effect : null };
}

function explain(error: NondeterminismError, edited: boolean): string {
  const where = error.stepPath ? `at step ${error.stepPath}` : 'at the run level';
  if (error.detail) {
    const line = error.detail.line !== undefined ? `line ${error.detail.line}: ` : '';
    // What resuming would do wrong depends on what was recorded: a request's answer and key, or a store's records.
    const harm = error.recorded.startsWith('the request')
      ? "answer the new request with the old one's recorded response, or send it under the old one's Idempotency-Key"
      : "take what the run recorded there for the edited step's work";
    return edited
      ? `The edit changes what the run already did — ${line}${error.detail.change} (${where}). Resuming with it would ${harm}; it is refused.`
      : `The run's own mission asked for a different request ${where} than it recorded — ${line}${error.detail.change}. Its inputs changed outside the log (an env value, a file), or the run was recorded by an engine release that evaluates this step otherwise (GUARANTEES.md 13); please report it if neither.`;
  }
  return (
    `Replay diverged ${where}: the log recorded ${error.recorded}, but the ${edited ? 'edited ' : ''}mission asked for ${error.asked}. ` +
    (edited
      ? 'The edit moved or changed a step before the end of what the run had already done; resuming with it would not be safe.'
      : 'The mission is the one the run started with, so the divergence comes from data read outside the log, or from an engine release that evaluates this step otherwise (GUARANTEES.md 13) — please report it if neither.')
  );
}
