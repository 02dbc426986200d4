/**
 * `reqon verify`: replay a run against its log with no effects at all — no request leaves, no
 * store is written, nothing is appended — and report where the mission (the one the run started
 * with, or an edited one) and the log part ways, if they do.
 */
import { UnreadableEventError } from '../log/errors.js';
import type { Env, HttpTransport } from '../env/env.js';
import { identitiesOf } from '../journal/fork-identity.js';
import { DamagedLogError, Journal, META_EVENT_TYPES, ReplayExhausted, type StreamedRecord } from '../journal/journal.js';
import { credentialReadsOf } from './run-start.js';
import { assertRememberedMission } from './remembered-mission.js';
import { lineText, NondeterminismError } from '../journal/nondeterminism-error.js';
import { LAB_STOPPED_CODE, LOG_FORMAT, logFormatOf, SOURCE_SECRETS_FORMAT, STOPPED_FROM_OUTSIDE_CODES, type StoredEvent } from '../log/events.js';
import type { EventLog, MissionFiles, RunOptions } from '../log/log.js';
import type { CredentialsMap } from '../http/credentials.js';
import type { VerifyEntry, VerifyReport } from './verify-report.js';
import { createHash } from 'node:crypto';
import { REDACTED } from '../http/redact.js';
import { HttpRuntime } from '../steps/http-runtime.js';
import { StoreRuntime } from '../steps/store-runtime.js';
import { CrashInjector } from '../journal/crash-points.js';
import { Executor } from './executor.js';
import { credentialEnvValues, credentialSourceValues } from '../env/mission-env.js';
import { rememberedCredentialsOfRun } from '../http/given-credentials.js';
import { credentialNamesOf } from '../env/credential-names.js';
import { loadCredentials, RunUnavailableError } from './execute.js';
import { missionHash, modelFor, recordedModelOf, withRememberedSpecs } from './mission-cache.js';
import { refuseUnstartableMission } from './start-checks.js';
import { closingEvent } from './closing-event.js';
import type { MissionModel } from '../steps/mission-model.js';
import type { FetchOptions, WaitStep } from '../lang/ast.js';

const META = new Set<string>(META_EVENT_TYPES);

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
  // An edit `reqon run` would refuse is refused as invalid (exit 2), not compared: the fork or
  // resume it was asked for would send what comes before the stage it fails at.
  // The run's own mission given back (`--mission` with its very file) is no edit: under
  // `trace: minimal` an edit is "not fully verified" (its pure steps leave nothing to compare).
  const edited = opts.missionFiles !== undefined && missionHash(files) !== run.missionHash;
  if (edited) refuseUnstartableMission(model, run.options);
  // A long run is read as the walk reaches it (a window, as a resume reads it: a 1M-event run's
  // verify peaked at 386 MB RSS, 885 MB read whole); a prefix, or a log that cannot read
  // synchronously, is read whole — up to the row's last seq, as a running run's log grows meanwhile.
  // An event that cannot be read (changed outside the engine) is the verdict, at its seq: the
  // events before it are read, so the report still shows what the log holds.
  let unreadable: UnreadableEventError | undefined;
  const events = opts.events ?? (log.replayReader ? undefined : await log.read(runId, { toSeq: run.lastSeq }).catch(async (error: unknown) => {
    if (!(error instanceof UnreadableEventError) || error.runId !== runId) throw error;
    unreadable = error;
    return log.read(runId, { toSeq: error.seq - 1 });
  }));
  const first = events ? events[0] : (await log.read(runId, { fromSeq: 1, toSeq: 1 }))[0];
  const format = logFormatOf(first ? [first] : []);
  if (format > LOG_FORMAT) {
    throw new RunUnavailableError(
      `run ${runId} was recorded in log format ${format} by a newer engine; this one reads formats 1–${LOG_FORMAT} and cannot verify it`,
      'unreadable',
    );
  }
  const standIns = credentialStandIns(first, run.options.env, opts.env.vars);
  const env: Env = { ...opts.env, http: NO_NETWORK, vars: { ...opts.env.vars, ...standIns.vars } };
  const runEnv = { ...run.options.env, ...standIns.settings };
  const recordedBy = edited ? recordedModelOf(run.missionFiles) : undefined;
  const damaged = (error: DamagedLogError): NonNullable<VerifyReport['divergence']> => ({
    index: journal.asked.length,
    seq: error.atSeq ?? run.lastSeq,
    stepPath: '',
    recorded: error.detail,
    asked: 'a log as this engine writes it',
    explanation: `The log is damaged, so the run cannot be verified: ${error.message}. Restore the log from a copy; nothing past that point was checked.`,
    cause: 'damaged-log',
  });
  const finished = run.status === 'completed' || run.status === 'failed';
  const facts = new RecordedFacts(recordedBy ?? model);
  let stream: CheckedStream | undefined;
  if (events) for (const e of events) facts.observe(e);
  else stream = checkedStream(log, runId, run.lastSeq, facts);
  const recorded: readonly StoredEvent[] | StreamedRecord = events ?? stream!.record;
  const journal = new Journal(null, null, runId, recorded, env.clock, { verifyOnly: true, recordAsked: true, identities: identitiesOf(first) });
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
    // Redacted as the run redacted them: a credential-named setting in a URL or body is in the log
    // as [REDACTED], and so is a value equal to one of the run's credentials (read as a resume
    // reads them; where they cannot be read, such a request is another request).
    http: new HttpRuntime(model, env, {
      sources: run.options.sources,
      credentials: credentialsIfReadable(run.options, env),
      extraSecrets: [...credentialEnvValues(runEnv, env.vars, credentialNamesOf(format)), ...(format >= SOURCE_SECRETS_FORMAT ? credentialSourceValues(run.options.sources, credentialNamesOf(format)) : [])],
      rememberedCredentials: rememberedCredentialsOfRun(first, run.options.env, env.vars),
      progress: () => {},
      logFormat: format,
    }),
    runEnv,
    lastSync: async () => undefined,
    inbox: async () => [],
    progress: () => {},
  });

  let divergence: VerifyReport['divergence'] = null;
  let logEnd: ReplayExhausted | undefined;
  // A finished run's closing event; a crash lab's stop is one written from outside the run's walk
  // (while it waited or ran), which no replay derives: where the walk meets it, the run's recorded
  // course ends — not a divergence, not checked (helper 89, 92: DIVERGED, "please report it").
  const closing = finished && !opts.events ? await closingEvent(log, run) : undefined;
  const outsideStop = closing !== undefined && !(closing instanceof DamagedLogError) && closing.type === 'run.failed' && STOPPED_FROM_OUTSIDE_CODES.has(closing.payload.error.code) ? closing : undefined;
  let stoppedFromOutside: StoredEvent<'run.failed'> | undefined;
  try {
    if (unreadable) throw unreadable;
    await assertRememberedMission(log, run);
    if (events && !opts.events) assertContiguous(runId, events, run.lastSeq);
    const end = await executor.run();
    // The run's closing event is written by the caller of the walk, not by a step: ask for it here.
    // (A log that lost it ends the walk here, ReplayExhausted: see lostEnd below.)
    if (end.status === 'failed') journal.markPassedFailure('', 'run.failed', () => ({ error: end.error }));
    else if (end.status === 'completed') journal.take('', 'run.completed');
    else if (outsideStop && journal.peek('')?.seq === outsideStop.seq) {
      // The walk suspended where the run waited, and the lab stopped it there.
      journal.take('', 'run.failed');
      stoppedFromOutside = outsideStop;
    }
    journal.assertFullyConsumed();
  } catch (error) {
    if (error instanceof DamagedLogError) {
      divergence = damaged(error);
    } else if (error instanceof UnreadableEventError) {
      divergence = damaged(new DamagedLogError(runId, error.detail, error.seq));
    } else if (error instanceof NondeterminismError && outsideStop !== undefined && error.seq === outsideStop.seq) {
      // The walk asked for the next thing of a step (a wait's clock, a request) and met the lab's stop.
      stoppedFromOutside = outsideStop;
    } else if (error instanceof NondeterminismError) {
      const index = journal.asked.length;
      divergence = {
        index,
        seq: error.seq ?? 0,
        stepPath: error.stepPath,
        recorded: error.recorded,
        asked: error.asked,
        explanation: explain(error, edited, model) + standInNote(standIns),
        cause: edited ? 'edit' : 'nondeterminism',
        ...(error.detail?.line !== undefined ? { line: error.detail.line, ...fileOf(model, error.stepPath) } : {}),
        ...(error.detail ? { change: error.detail.change } : {}),
      };
    } else if (error instanceof ReplayExhausted) {
      logEnd = error;
    } else {
      throw error;
    }
  }
  // The walk stopped at the log's end with recorded events it never asked for: they were not
  // compared with anything, so they are said to be unchecked rather than passed as matching.
  // (Asked before the facts take the rest of the stream, which the journal may still read from.)
  const unreached = logEnd ? journal.unreached() : undefined;
  // The rest past a gap the walk never reached (it stopped before) is not read: the gap is the verdict.
  const gap = stream?.drain();
  if (gap) divergence ??= damaged(gap);
  // A finished run's log ends with its closing event (the walk's, or one written from outside it:
  // a lab's stop, a mission that can no longer replay). One that does not lost its end outside the
  // engine — cut anywhere, the walk ran out of log where a run that has not finished would stop,
  // and a finished run's row is no unfinished run (helper 86: "verified", exit 0, for a cut log).
  if (divergence === null && !opts.events && finished) {
    if (closing instanceof DamagedLogError) divergence = damaged(closing);
  }
  // A finished run's row counts every event it will ever have: one past it was added outside the engine.
  if (divergence === null && !opts.events && finished) {
    const [extra] = await log.read(runId, { fromSeq: run.lastSeq + 1, limit: 1 });
    if (extra !== undefined) {
      divergence = damaged(new DamagedLogError(runId, `it holds events past seq ${run.lastSeq}, where its ${run.status} run row ends (seq ${extra.seq}: ${extra.type}; added outside the engine)`, extra.seq));
    }
  }
  // Rows gone under the walk, read a window at a time, may be a prune's (`reqon prune`, a worker's
  // --prune-completed-before) of this finished run, not damage: with its row gone, there is no run
  // to verify — not a DAMAGED LOG that sends the user to a backup (probe 112 K12).
  if (divergence?.cause === 'damaged-log' && finished && (await log.getRun(runId)) === undefined) {
    throw new RunUnavailableError(`run ${runId} was pruned while verify read it (reqon prune, or a worker's --prune-completed-before): there is no run left to verify`, 'not-found');
  }
  const { original } = facts;
  const replayed: VerifyEntry[] = journal.asked;
  const unchecked = [...uncheckedBy(format, facts), ...unplannedWrites(facts), ...standInsReadOpenly(model, standIns)];
  if (journal.uncomparedEffectIds > 0) {
    unchecked.push(
      `the effect ids of ${journal.uncomparedEffectIds} request(s) or store write(s) in concurrent branches of this fork: they are not the ids derived now (an older engine named such effects by how the branches interleaved, which a replay does not repeat), so the recorded ids were taken as they are`,
    );
  }
  if (recordedBy) unchecked.push(...unmeasuredLimits(recordedBy, model, facts), ...untracedPureSteps(recordedBy), ...unnamedReads(facts));
  if (stoppedFromOutside) {
    const by = stoppedFromOutside.payload.error.code === LAB_STOPPED_CODE ? 'the crash lab stopped it' : 'its resume failed it';
    unchecked.push(`the run's end: ${by} at seq ${stoppedFromOutside.seq} (${stoppedFromOutside.payload.error.message}), where it stood — an act from outside the run, which no replay derives`);
  }
  if (logEnd && unreached) {
    unchecked.push(
      `${unreached.count} recorded event(s) from seq ${unreached.first.seq} (${unreached.first.type} at ${unreached.first.stepPath || '(run)'}): ` +
        `the replay reached the end of the log at ${logEnd.stepPath || '(run)'} before it asked for them`,
    );
  }
  return { runId, ok: divergence === null, original, replayed, divergence, unchecked, runStatus: run.status, lastSeq: run.lastSeq };
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
  const detail = d.change ? { ...(d.line !== undefined ? { line: d.line } : {}), ...(d.file !== undefined ? { file: d.file } : {}), change: d.change } : undefined;
  throw new NondeterminismError(runId, d.stepPath, d.seq, d.recorded, d.asked, detail, ...(opts.advise ? [opts.advise(d.seq)] : []));
}

interface CheckedStream {
  /** What the journal walks: the run's events but the resume machinery's, a chunk at a time. */
  record: StreamedRecord;
  /** Reads what the walk left and gives the facts every event; the gap found, if any. */
  drain(): DamagedLogError | undefined;
}

/**
 * The run's events up to `lastSeq` read through the log's synchronous reader, each seq checked
 * to follow the one before (the resume machinery's are read too, so a gap is seen where it is;
 * a gap throws DamagedLogError, at the walk or at `drain`) and handed to `facts` as it is read
 * (no measureRun: a verify walks every page).
 */
function checkedStream(log: EventLog, runId: string, lastSeq: number, facts: RecordedFacts): CheckedStream {
  const counted = log.replayReader!(runId, lastSeq, META_EVENT_TYPES).total;
  const inner = log.replayReader!(runId, lastSeq, []);
  let expected = 1;
  let gap: DamagedLogError | undefined;
  const next = (max: number): StoredEvent[] => {
    if (gap) throw gap;
    const out: StoredEvent[] = [];
    while (out.length < max) {
      const chunk = inner.next(max - out.length);
      if (chunk.length === 0) break;
      for (const e of chunk) {
        if (e.seq !== expected) throw (gap = DamagedLogError.missing(runId, expected, lastSeq));
        expected++;
        facts.observe(e);
        if (!META.has(e.type)) out.push(e);
      }
    }
    return out;
  };
  return {
    record: { reader: { total: counted, next }, lastSeq },
    drain: () => {
      try {
        while (next(FACTS_CHUNK).length > 0);
        return undefined;
      } catch (error) {
        if (error instanceof DamagedLogError) return error;
        throw error;
      }
    },
  };
}

/** A whole log read at once (no reader counted it) must hold every seq from 1 to its run row's last. */
function assertContiguous(runId: string, events: readonly StoredEvent[], lastSeq: number): void {
  const gap = events.findIndex((e, i) => e.seq !== i + 1);
  if (gap < 0 && events.length === lastSeq) return;
  throw DamagedLogError.missing(runId, gap < 0 ? events.length + 1 : gap + 1, lastSeq);
}

/** headersSha256 of a request the mission gives no headers. */
const NO_HEADERS_SHA256 = createHash('sha256').update('{}').digest('hex');

/** Events read at a time by the pass that gathers RecordedFacts from a streamed log. */
const FACTS_CHUNK = 4096;
/** Distinct step paths and types RecordedFacts shares among its entries, at most. */
const INTERNED = 10_000;

/**
 * What verify reports about the whole recorded log besides the walk — every entry, and what the
 * recorded requests and writes do not let a replay check — gathered in one pass over its events,
 * so a long run's are never all in memory at once.
 */
class RecordedFacts {
  /** Every recorded event but the resume machinery's, as the report lists them. */
  readonly original: VerifyEntry[] = [];
  /** http.request events recorded without an identity at all, or without its header, source or named-value parts. */
  identityless = 0;
  headerless = 0;
  sourceless = 0;
  unnamed = 0;
  /** Sources some recorded request went through; actions some recorded request was made in. */
  readonly answeredSources = new Set<string>();
  readonly requestedActions = new Set<string>();
  /** A loop's store reads and a fetch's checkpoint reads recorded without the store or key they read (before 2026-12-05). */
  unnamedReads = 0;
  /** Actions some recorded wait was registered in. */
  readonly waitedActions = new Set<string>();
  /** Actions some recorded answer came from a redirect's last hop in (its 3xx is not in the log). */
  readonly redirectedActions = new Set<string>();
  /** Writes recorded without their planned record where what is stored may hold more (unplannedWrites). */
  unplannedWrites = 0;

  private readonly strings = new Map<string, string>();

  /** `stores`: the model whose stores' kinds the recorded writes went to. */
  constructor(private readonly stores: MissionModel) {}

  /** `text` as first seen; a long loop's paths are each new, so past INTERNED distinct ones new texts are kept as they are. */
  private intern(text: string): string {
    const known = this.strings.get(text);
    if (known !== undefined) return known;
    if (this.strings.size < INTERNED) this.strings.set(text, text);
    return text;
  }

  observe(e: StoredEvent): void {
    if (META.has(e.type)) return;
    // A long run's entries are most of what verify holds: each path and type kept once.
    this.original.push({ ...entryOf(e), stepPath: this.intern(e.stepPath), type: this.intern(e.type) });
    if (e.type === 'http.request') {
      const identity = (e as StoredEvent<'http.request'>).payload.identity;
      this.requestedActions.add(actionOf(e.stepPath));
      // Without one a replay compares only the request's method (fetch-step.ts assertSameRequest).
      if (identity === undefined) {
        this.identityless++;
        return;
      }
      if (identity.headersSha256 === undefined) this.headerless++;
      if (identity.source === undefined) this.sourceless++;
      else this.answeredSources.add(identity.source);
      // Values of credential-named parameters and headers (redacted by name in the URL and
      // headers) entered identities later: a request that may have had some, recorded before,
      // was not compared on them — one whose identity URL shows a redaction, or that had mission headers at all.
      if (
        identity.namedValuesSha256 === undefined &&
        (identity.url.includes(REDACTED) || (identity.headersSha256 !== undefined && identity.headersSha256 !== NO_HEADERS_SHA256))
      ) {
        this.unnamed++;
      }
    } else if (e.type === 'value.recorded') {
      const { source, value, store, key } = (e as StoredEvent<'value.recorded'>).payload;
      if ((source === 'store-read' && Array.isArray(value) && store === undefined) || (source === 'last-sync' && typeof value === 'number' && key === undefined)) this.unnamedReads++;
    } else if (e.type === 'http.response') {
      if ((e as StoredEvent<'http.response'>).payload.response.redirectedTo !== undefined) this.redirectedActions.add(actionOf(e.stepPath));
    } else if (e.type === 'wait.registered') {
      this.waitedActions.add(actionOf(e.stepPath));
    } else if (e.type === 'store.write') {
      const { op, store, planned } = (e as StoredEvent<'store.write'>).payload;
      if (op === 'delete' || planned !== undefined) return;
      const kind = this.stores.stores.get(store)?.type.kind;
      if (op === 'upsert' || kind === 'file' || kind === 'postgrest') this.unplannedWrites++;
    }
  }
}

/** What a log of `format` (and its requests' recorded identities) does not let a replay check. */
function uncheckedBy(format: number, facts: RecordedFacts): string[] {
  if (format < 2) {
    return [
      `requests' URLs and bodies: this run was recorded before request identities (log format ${format}); only their methods were compared`,
    ];
  }
  const { identityless, headerless, sourceless, unnamed } = facts;
  const out: string[] = [];
  if (identityless > 0) {
    out.push(
      `requests' URLs, bodies and headers: ${identityless} request(s) have no recorded identity in a log format that records one (the log was edited or damaged); only their methods were compared`,
    );
  }
  if (headerless > 0) out.push(`requests' headers: ${headerless} request(s) were recorded by an engine before header identities; their URLs and bodies were compared, their headers not`);
  if (unnamed > 0) {
    out.push(
      `credential-named parameters and headers: ${unnamed} request(s) were recorded by an engine before their values entered identities; an edit of a \`*_token\` parameter or a \`*Token\` header of theirs was not caught`,
    );
  }
  // Two sources may share a base URL under different credentials: without the name, a request moved to the other source was not caught.
  if (sourceless > 0) out.push(`requests' sources: ${sourceless} request(s) were recorded by an engine before source identities; which source each went through was not compared`);
  return out;
}

/**
 * Writes recorded before `store.write` held their planned record: an upsert's (what it stored is
 * a merge) and a file or PostgREST store's (what it keeps may hold more). Their planned records
 * were checked to be contained in what was stored, so a field an edit dropped was not caught.
 */
/** An edited mission against reads recorded without what they read: compared on their value alone. */
function unnamedReads(facts: RecordedFacts): string[] {
  if (facts.unnamedReads === 0) return [];
  return [
    `what ${facts.unnamedReads} recorded read(s) read (a loop's store, a fetch's checkpoint key): recorded before reads named it, so an edit that reads another was compared on the recorded value alone`,
  ];
}

function unplannedWrites(facts: RecordedFacts): string[] {
  if (facts.unplannedWrites === 0) return [];
  return [
    `store records: ${facts.unplannedWrites} upsert(s) or write(s) to file or PostgREST stores were recorded by an engine before their planned records were logged; each planned record was checked to be contained in what was stored, so a field an edit dropped was not caught`,
  ];
}

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

/**
 * A stand-in is as good as the credential where the credential only goes where a credential goes
 * (a credential-named header or query value, hidden from what replay compares). Read anywhere
 * else — a body field, a condition, a record — what the mission computed from it was replayed
 * from the stand-in, and a value that happens to come out the same as the run's is no check.
 */
function standInsReadOpenly(model: MissionModel, standIns: { vars: Record<string, string>; settings: Record<string, string> }): string[] {
  const replaced = credentialReadsOf(model).readOpenly.filter((name) => Object.hasOwn(standIns.vars, name) || Object.hasOwn(standIns.settings, name));
  if (replaced.length === 0) return [];
  return [
    `what the mission computes from ${replaced.join(', ')} outside a credential header or query parameter (a body field, a condition, a record): not set where verify runs, ${replaced.length === 1 ? 'it was' : 'they were'} replayed with a stand-in, so those values were not checked against the run's`,
  ];
}

/** Said with a divergence where the replay read stand-ins: a step that uses a credential's value cannot be replayed without it. */
function standInNote(standIns: { vars: Record<string, string>; settings: Record<string, string> }): string {
  const names = [...Object.keys(standIns.vars), ...Object.keys(standIns.settings)];
  return names.length === 0
    ? ''
    : ` The replay read stand-ins for ${names.join(', ')}, not set where verify runs: if a step's outcome depends on a credential's value, set ${names.length === 1 ? 'it' : 'them'} and verify again.`;
}

/** What verify reads in place of a credential it cannot read (credentialStandIns). */
const CREDENTIAL_STAND_IN = 'reqon-verify-credential-stand-in';

/**
 * The credentials the run had when it started (its `run.started` names them, log format 9) that
 * are not set where verify runs — a `REQON_*` variable unset in this process, a setting no run
 * stores, a bundle's run imported elsewhere — each given a stand-in: which credential a request
 * carries, and its value, are no part of the request's identity, so the replay compares the same
 * as with the value. Without one, the request failed to build and an unchanged run verified as
 * DIVERGED (helper 96). A credential the run did not have gets none: its run failed for want of
 * it, and so does the replay.
 */
function credentialStandIns(first: StoredEvent | undefined, settings: Readonly<Record<string, string>>, vars: Readonly<Record<string, string | undefined>>): { vars: Record<string, string>; settings: Record<string, string> } {
  const out = { vars: {} as Record<string, string>, settings: {} as Record<string, string> };
  const had = first?.type === 'run.started' ? ((first as StoredEvent<'run.started'>).payload.credentialsSet ?? []) : [];
  for (const name of had) {
    if (Object.hasOwn(settings, name)) continue;
    if (name.startsWith('REQON_')) {
      if (vars[name] === undefined) out.vars[name] = CREDENTIAL_STAND_IN;
    } else out.settings[name] = CREDENTIAL_STAND_IN;
  }
  return out;
}

/**
 * An edit of a source's `timeout` or `maxResponseBytes` decides whether a recorded answer would
 * have come at all, and the log holds neither how long an answer took to its last byte nor its
 * size on the wire: its answers were not measured against the edit, which is said, not passed.
 * Nor is an edit of its `circuitBreaker` (whether a request would have gone out at all), nor of its
 * `auth` kind (credentials are no part of a request's identity), nor of its
 * `rateLimit` (whether a request would have waited, or failed the run: `strategy: fail`), nor of a
 * wait's `eventFilter`: the deliveries the wait refused are not in the run's log (only in the
 * inbox), so whether the edited filter would have taken another is not asked (helper 75: each verified).
 */
function unmeasuredLimits(recordedBy: MissionModel, model: MissionModel, facts: RecordedFacts): string[] {
  const answered = facts.answeredSources;
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
    const before = settingsText(was.circuitBreaker);
    const after = settingsText(source.circuitBreaker);
    if (before !== after) {
      out.push(
        `source ${name}'s circuitBreaker (${before} → ${after}): the requests it let through and the attempts it refused were replayed as recorded, not decided again by the edited breaker`,
      );
    }
    // Credentials are no part of a request's identity (a rotated token must not diverge), so an
    // edit of what kind the source sends is not compared either (helper 75: none → bearer verified).
    const authBefore = was.auth?.kind ?? 'none';
    const authAfter = source.auth?.kind ?? 'none';
    if (authBefore !== authAfter) {
      out.push(
        `source ${name}'s auth (${authBefore} → ${authAfter}): the credentials a request carries are no part of its identity, so whether the API would have answered the edited requests otherwise was not checked`,
      );
    }
    const limitBefore = settingsText(was.rateLimit);
    const limitAfter = settingsText(source.rateLimit);
    if (limitBefore !== limitAfter) {
      out.push(
        `source ${name}'s rateLimit (${limitBefore} → ${limitAfter}): its requests were replayed as they were sent, not paced, held or failed again by the edited limit`,
      );
    }
  }
  // Which credential a request carries is no part of its identity either (run-start.ts
  // credentialVariablesReadBy): an edit that reads others is said, never passed.
  if (answered.size > 0) {
    const before = credentialReadsOf(recordedBy);
    const after = credentialReadsOf(model);
    const typed = before.literals.join() === after.literals.join() ? '' : ', and a credential typed into the mission';
    if (before.names.join() !== after.names.join() || typed !== '') {
      out.push(
        `the credentials the mission reads ([${before.names.join(', ')}] → [${after.names.join(', ')}]${typed}): which credential a request carries is no part of its identity, so whether the API would have answered the edited requests otherwise was not checked`,
      );
    }
  }
  // A wait's eventFilter: the deliveries it refused left nothing in the run's log.
  const recordedFilters = waitFilters(recordedBy);
  for (const [action, filters] of waitFilters(model)) {
    const before = recordedFilters.get(action);
    if (!facts.waitedActions.has(action) || before === undefined || before.join() === filters.join()) continue;
    out.push(
      `the eventFilter of the waits of action ${action}: the deliveries they refused are not in the run's log, so whether the edited filter would have taken another delivery than the one it took was not checked`,
    );
  }
  // A 3xx an edit lets a request take as its answer (`allow: [302]`) where the run followed a
  // redirect: the log holds the last hop's answer only, so the redirect the edited request would
  // have answered with is not there to replay (probe 107 K1: verified ✓, while the edit stores nothing).
  const recordedRedirects = redirectAllows(recordedBy);
  for (const [action, steps] of redirectAllows(model)) {
    const before = recordedRedirects.get(action);
    if (!facts.redirectedActions.has(action) || before === undefined || before.join() === steps.join()) continue;
    out.push(
      `the 3xx answers the requests of action ${action} allow ([${before.join('; ')}] → [${steps.join('; ')}]): the run followed a redirect there, and the log holds only its last hop's answer, so whether an edited request would have answered with the redirect itself was not checked`,
    );
  }
  // A request's own `timeout`, or its `retry`'s, over the source's: the same, request by request.
  const requested = facts.requestedActions;
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
  return perRequest(model, (options) => `timeout ${options.timeout ?? 'as the source'}, retry timeout ${options.retry?.timeout ?? 'as the source'}`);
}

/** Each action's requests' allowed 3xx statuses, in the order written (`none` for a request allowing none). */
function redirectAllows(model: MissionModel): Map<string, string[]> {
  return perRequest(model, (options) => {
    const redirects = (options.allow?.statuses ?? []).filter((status) => status >= 300 && status < 400);
    return redirects.length > 0 ? redirects.join(', ') : 'none';
  });
}

/** perAction over the requests (`get`/`post`/… and `call`) that have options: what `pick` makes of each's. */
function perRequest(model: MissionModel, pick: (options: FetchOptions) => string): Map<string, string[]> {
  return perAction(model, (o) => {
    const step = o as { kind?: unknown; options?: FetchOptions; operation?: unknown };
    return (step.kind === 'Fetch' || (step.kind === 'Call' && step.operation !== undefined)) && step.options ? pick(step.options) : undefined;
  });
}

/** Each action's waits' eventFilters, in the order written, as settingsText shows them (no places). */
function waitFilters(model: MissionModel): Map<string, string[]> {
  return perAction(model, (o) => ((o as { kind?: unknown }).kind === 'Wait' ? settingsText((o as unknown as WaitStep).eventFilter as object | undefined) : undefined));
}

/** Per action, what `pick` makes of each node of its steps' tree it answers for, in the order written. */
function perAction(model: MissionModel, pick: (node: object) => string | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, action] of model.actions) {
    const found: string[] = [];
    const visit = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      if (Array.isArray(node)) {
        for (const item of node) visit(item);
        return;
      }
      const picked = pick(node);
      if (picked !== undefined) found.push(picked);
      for (const value of Object.values(node)) visit(value);
    };
    visit(action.steps);
    out.set(name, found);
  }
  return out;
}

/** Settings (a source's breaker or rate limit, an expression) as written, where they are in the file left out: `none` without any. */
function settingsText(settings: object | undefined): string {
  if (!settings) return 'none';
  const shown = Object.entries(settings)
    .filter(([key, value]) => value !== undefined && key !== 'optionSpans' && key !== 'start' && key !== 'end')
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, value]) => `${key}: ${value !== null && typeof value === 'object' ? settingsText(value) : String(value)}`);
  return `{ ${shown.join(', ')} }`;
}

/** The action a step path is in: `Approve~2/1` (a retried attempt) and `Approve#3/0` (a visit) are Approve's. */
function actionOf(stepPath: string): string {
  return stepPath.split('/')[0]!.replace(/([~#]\d+)+$/, '');
}

function entryOf(e: StoredEvent): VerifyEntry {
  const effect = (e.payload as { effectId?: unknown }).effectId;
  return { seq: e.seq, stepPath: e.stepPath, type: e.type, effectId: typeof effect === 'string' ? effect : null };
}

/** The file of the step at `stepPath` (its action's), in a folder mission, where a line alone names no place (helper 96). */
function fileOf(model: MissionModel, stepPath: string): { file?: string } {
  const action = /^([^/:[]+)/.exec(stepPath)?.[1];
  const file = action === undefined ? undefined : model.actionFile(action);
  return file === undefined ? {} : { file };
}

/**
 * The documented cause a mission's own replay may part by (GUARANTEES, "Not delivered"): a memory
 * store read in branches that run at once (a parallel stage, a concurrent loop) while another
 * writes it is not recorded, so a replay may read it otherwise (probe 110 K12: the message said
 * only "inputs changed outside the log", "please report").
 */
function concurrentMemoryReads(model: MissionModel): string {
  if (!model.hasMemoryStores) return '';
  const parallel = (model.pipeline?.stages ?? []).some((stage) => stage.actions.length > 1);
  const concurrent = (o: object) => {
    const step = o as { kind?: unknown; concurrency?: number };
    return step.kind === 'For' && (step.concurrency ?? 1) > 1 ? 'concurrent' : undefined;
  };
  const concurrentLoop = [...perAction(model, concurrent).values()].some((loops) => loops.length > 0);
  if (!parallel && !concurrentLoop) return '';
  return ` Or, as this mission runs branches at once (${parallel ? 'a parallel stage' : 'a concurrent loop'}): a memory store one branch reads while another writes it is not recorded, and a replay may read it otherwise — a known limit (GUARANTEES.md, "Not delivered"); read such a store after the branches end, or use a sql store.`;
}

function explain(error: NondeterminismError, edited: boolean, model: MissionModel): string {
  const where = error.stepPath ? `at step ${error.stepPath}` : 'at the run level';
  if (error.detail) {
    const line = lineText({ ...error.detail, ...fileOf(model, error.stepPath) });
    // What resuming would do wrong depends on what was recorded: a request's answer and key, or a store's records.
    const harm = error.recorded.startsWith('the request')
      ? "answer the new request with the old one's recorded response, or send it under the old one's Idempotency-Key"
      : "take what the run recorded there for the edited step's work";
    return edited
      ? `The edit changes what the run already did — ${line}${error.detail.change} (${where}). Resuming with it would ${harm}; it is refused.`
      : `The run's own mission did otherwise ${where} than it recorded — ${line}${error.detail.change}. Its inputs changed outside the log (an env value, a file), or the run was recorded by an engine release that evaluates this step otherwise (GUARANTEES.md 13).${concurrentMemoryReads(model)} Please report it if none of these.`;
  }
  return (
    `Replay diverged ${where}: the log recorded ${error.recorded}, but the ${edited ? 'edited ' : ''}mission asked for ${error.asked}. ` +
    (edited
      ? 'The edit moved or changed a step before the end of what the run had already done; resuming with it would not be safe.'
      : `The mission is the one the run started with, so the divergence comes from data read outside the log, or from an engine release that evaluates this step otherwise (GUARANTEES.md 13).${concurrentMemoryReads(model)} Please report it if none of these.`)
  );
}

function credentialsIfReadable(options: RunOptions, env: Env): CredentialsMap | undefined {
  try {
    return loadCredentials(options, env);
  } catch {
    return undefined;
  }
}
