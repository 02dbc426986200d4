/**
 * Run bundles (`.reqonrun`): one run, portable — so a user can attach a run to a bug report and a
 * maintainer can scrub it on another machine, with every view of the studio and `reqon verify`.
 *
 *   { "reqonRunBundle": 1,
 *     "run":    { runId, mission, missionHash, missionFiles, options, status, createdAt },
 *     "events": [ { seq, type, stepPath, payload, recordedAt }, … ] }   seq 1, 2, 3, … in order
 *
 * What leaves the machine: the mission's text, the run's `--source` URLs and `--env` values with
 * every credential-named one (TOKEN, SECRET, PASSWORD, API_KEY…, the names env() treats as
 * secrets) replaced by "[redacted]" — in URLs, their query parameters — and no auth file path; the
 * events as the log holds them, which were redacted before they were written.
 *
 * Importing is the other way round, with a bundle that may be corrupt or hostile: every field is
 * checked (types, seq 1..n in order, known event types, the mission text against its hash, the
 * mission against this engine's checks, a log format this engine reads, values the log can hold)
 * and the first problem is named with where it is, before anything is written. An imported run
 * keeps its id (its effect ids hash it, so verify can replay it) and is read-only: it is owned by
 * IMPORTED_OWNER under a lease that never runs out, so no worker takes it over and no resume
 * starts; its status is the one its events end with.
 */
import { credentialEnvValues, credentialSourceValues } from '../env/mission-env.js';
import { rememberedCredentials } from '../http/given-credentials.js';
import { eventPages } from '../log/event-pages.js';
import { LOG_FORMAT, logFormatOf, type CredentialDigests, type EventPayloads, type EventType, type NewEvent, type StoredEvent } from '../log/events.js';
import { IMPORTED_OWNER, type EventLog, type MissionFiles, type RunOptions, type RunRecord, type RunStatus } from '../log/log.js';

export { IMPORTED_OWNER } from '../log/log.js';
import { asLogged, UnloggableValueError } from '../log/loggable.js';
import { MissionInvalidError, missionHash, modelFor } from './mission-cache.js';

export const BUNDLE_VERSION = 1;
const IMPORTED_LEASE_MS = 100 * 365 * 24 * 3600 * 1000;
export const MAX_BUNDLE_BYTES = 512 * 1024 * 1024;
const REDACTED = '[redacted]';
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export interface RunBundle {
  reqonRunBundle: typeof BUNDLE_VERSION;
  run: Pick<RunRecord, 'runId' | 'mission' | 'missionHash' | 'missionFiles' | 'options' | 'status' | 'createdAt'>;
  events: Omit<StoredEvent, 'runId'>[];
}

/** A bundle that cannot be imported, and where: `at` is a JSON path such as `events[12].seq`. */
export class BundleError extends Error {
  constructor(
    readonly at: string,
    message: string,
    /** A valid bundle of a run this log already holds (not a bad file). */
    readonly alreadyHere = false,
  ) {
    super(at === '' ? message : `${at}: ${message}`);
    this.name = 'BundleError';
  }
}

/** Events a page of an export holds at most (each page is also bounded by its bytes: eventPages). */
const EXPORT_PAGE = 5000;

/**
 * The bundle of `runId` as JSON text, a piece at a time: pieces that join to what
 * `JSON.stringify` makes of a RunBundle, holding one page of events at a time — so a run of a
 * million events, or with answers of hundreds of megabytes (past the longest string V8 can make),
 * is written out as it is read. The bundle is the run as it stood when the export began: its
 * status, and its events up to the seq it had reached then (a live run goes on appending).
 */
export async function* exportRunText(log: EventLog, runId: string): AsyncGenerator<string> {
  const run = await log.getRun(runId);
  if (!run) throw new BundleError('', `no run ${runId} in this log`);
  const head: RunBundle['run'] = {
    runId: run.runId,
    mission: run.mission,
    missionHash: run.missionHash,
    missionFiles: run.missionFiles,
    options: withoutSecrets(run.options, await credentialDigestsOf(log, runId)),
    status: run.status,
    createdAt: run.createdAt,
  };
  yield `{"reqonRunBundle":${JSON.stringify(BUNDLE_VERSION)},"run":${JSON.stringify(head)},"events":[`;
  let written = 0;
  for await (const page of eventPages(log, runId, { size: EXPORT_PAGE, lastSeq: run.lastSeq })) {
    const pieces: string[] = [];
    for (const e of page) {
      if (e.seq > run.lastSeq) break;
      pieces.push(JSON.stringify({ seq: e.seq, type: e.type, stepPath: e.stepPath, payload: e.payload, recordedAt: e.recordedAt }));
    }
    if (pieces.length === 0) break;
    yield `${written === 0 ? '' : ','}${pieces.join(',')}`;
    written += pieces.length;
    if (page[page.length - 1]!.seq >= run.lastSeq) break;
  }
  yield ']}\n';
}

/**
 * The options a bundle carries: no auth file, env values redacted where their names mark a
 * credential or where they equal a credential the run was given (its `run.started` digests,
 * http/given-credentials.ts), URL parameters redacted.
 */
export function withoutSecrets(options: RunOptions, digests?: readonly CredentialDigests[]): RunOptions {
  const secrets = new Set([...credentialEnvValues(options.env, {}), ...rememberedCredentials(digests, Object.values(options.env))]);
  const env = Object.fromEntries(Object.entries(options.env).map(([k, v]) => [k, secrets.has(v) ? REDACTED : v]));
  const sources = Object.fromEntries(Object.entries(options.sources).map(([name, url]) => [name, redactUrl(url)]));
  return { sources, env };
}

/** The options as `reqon runs --json` and `reqon show --json` print them: their secrets redacted as a bundle's are. */
export function shownOptions(options: RunOptions): RunOptions {
  return { ...options, ...withoutSecrets(options) };
}

function redactUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  const secrets = new Set(credentialSourceValues({ url: text }));
  let changed = false;
  for (const [k, v] of [...url.searchParams]) {
    if (secrets.has(v)) {
      url.searchParams.set(k, REDACTED);
      changed = true;
    }
  }
  if (url.password !== '') {
    url.password = REDACTED;
    changed = true;
  }
  // Untouched otherwise: URL's own normalisation (a trailing '/') is no business of a bundle.
  return changed ? url.toString() : text;
}

/** Parses and checks a bundle's text; throws BundleError naming the first problem. */
export function parseBundle(text: string): RunBundle {
  if (Buffer.byteLength(text) > MAX_BUNDLE_BYTES) throw new BundleError('', `larger than ${MAX_BUNDLE_BYTES} bytes`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new BundleError('', `not a run bundle: the file is not JSON (${(e as Error).message})`);
  }
  const top = object(raw, '');
  if (top['reqonRunBundle'] !== BUNDLE_VERSION) {
    throw new BundleError('reqonRunBundle', `expected ${BUNDLE_VERSION} (a run bundle of this engine) but got: ${short(top['reqonRunBundle'])}`);
  }
  const run = object(top['run'], 'run');
  const runId = string(run['runId'], 'run.runId');
  if (!RUN_ID.test(runId)) throw new BundleError('run.runId', `expected a run id (letters, digits, _ . : -) but got: ${short(runId)}`);
  const files = object(run['missionFiles'], 'run.missionFiles');
  const fileList = (value: unknown, where: string) =>
    array(value, where).map((f, i) => {
      const file = object(f, `${where}[${i}]`);
      return { path: string(file['path'], `${where}[${i}].path`), text: string(file['text'], `${where}[${i}].text`) };
    });
  const missionFiles: MissionFiles = {
    entry: string(files['entry'], 'run.missionFiles.entry'),
    files: fileList(files['files'], 'run.missionFiles.files'),
    // The OpenAPI documents the run remembered (absent in runs recorded before).
    ...(files['attachments'] !== undefined ? { attachments: fileList(files['attachments'], 'run.missionFiles.attachments') } : {}),
  };
  const hash = string(run['missionHash'], 'run.missionHash');
  if (missionHash(missionFiles) !== hash) throw new BundleError('run.missionHash', 'the mission text does not match its hash: the bundle was edited or is corrupt');
  const options = object(run['options'], 'run.options');
  const runOptions: RunOptions = { sources: stringMap(options['sources'], 'run.options.sources'), env: stringMap(options['env'], 'run.options.env') };
  const status = string(run['status'], 'run.status') as RunStatus;
  if (!['running', 'suspended', 'completed', 'failed'].includes(status)) throw new BundleError('run.status', `expected a run status but got: ${short(status)}`);
  const events = array(top['events'], 'events').map((e, i) => checkedEvent(e, i));
  if (events.length === 0 || events[0]!.type !== 'run.started') throw new BundleError('events[0]', 'expected the run.started event first');
  refuseCutEnd(status, events);
  const format = logFormatOf(events as StoredEvent[]);
  if (format > LOG_FORMAT) throw new BundleError('events[0].payload.format', `recorded in log format ${format}; this engine reads formats 1–${LOG_FORMAT}`);
  try {
    modelFor(missionFiles, hash);
  } catch (e) {
    if (e instanceof MissionInvalidError) throw new BundleError('run.missionFiles', `the mission does not pass this engine's checks:\n${e.rendered}`);
    throw e;
  }
  return {
    reqonRunBundle: BUNDLE_VERSION,
    run: { runId, mission: string(run['mission'], 'run.mission'), missionHash: hash, missionFiles, options: runOptions, status, createdAt: integer(run['createdAt'], 'run.createdAt') },
    events,
  };
}

/**
 * A finished run's closing event is its last (closing-event.ts): a bundle that says "completed"
 * (or "failed") without ending in it was cut or edited, and one ending in it says so. It was
 * imported as a run "stopped before its end", exit 0, which verify then called not checked
 * rather than damaged (probe 112 K9).
 */
function refuseCutEnd(status: RunStatus, events: readonly { type: string; seq: number }[]): void {
  const last = events[events.length - 1]!;
  const closing = status === 'completed' ? 'run.completed' : status === 'failed' ? 'run.failed' : undefined;
  if (closing !== undefined && last.type !== closing) {
    throw new BundleError('events', `run.status says ${status}, but the events end at seq ${last.seq} with ${last.type}, not ${closing}: the bundle was cut or edited`);
  }
  if (closing === undefined && (last.type === 'run.completed' || last.type === 'run.failed')) {
    throw new BundleError('run.status', `says ${status}, but the events end with ${last.type}: the bundle was edited`);
  }
}

/** Writes a checked bundle's run into the log, read-only (see the header). */
export async function importBundle(log: EventLog, bundle: RunBundle): Promise<RunRecord> {
  const { run, events } = bundle;
  if (await log.getRun(run.runId)) throw new BundleError('', `run ${run.runId} is already in this log`, true);
  const first = events.map((e) => ({ type: e.type, stepPath: e.stepPath, payload: e.payload, recordedAt: e.recordedAt }) as NewEvent);
  const { lease } = await log.createRun(
    { runId: run.runId, mission: run.mission, missionHash: run.missionHash, missionFiles: run.missionFiles, options: run.options, createdAt: run.createdAt },
    IMPORTED_OWNER,
    IMPORTED_LEASE_MS,
    first,
  );
  const last = events[events.length - 1]!.type;
  const status: RunStatus = last === 'run.completed' ? 'completed' : last === 'run.failed' ? 'failed' : 'running';
  // A finished run is finished; any other stays 'running' under the never-expiring lease, which
  // keeps workers and resumes away from it. The owner stays: it is how a reader sees the import.
  if (status !== 'running') await log.commit(lease, [], { durable: true, status: { status } });
  return (await log.getRun(run.runId))!;
}

export function isImported(run: Pick<RunRecord, 'owner'>): boolean {
  return run.owner === IMPORTED_OWNER;
}

/**
 * What an imported run that had not finished is, said from the event its log ends with: its
 * record says 'running' only to keep workers and resumes off it (see importBundle).
 */
export function importedOpenState(lastType: string | undefined): 'suspended' | 'stopped before its end' {
  return lastType === 'run.suspended' ? 'suspended' : 'stopped before its end';
}

/**
 * The status a run is shown with: its record's, but an unfinished imported run's from its log's
 * last event — 'suspended' where it suspended, not the 'running' its record keeps to hold workers
 * off (probe 106 K1, probe 109 K2: a script polling for 'running' to end waited for ever).
 */
export async function shownStatus(log: Pick<EventLog, 'read'>, run: Pick<RunRecord, 'runId' | 'owner' | 'status' | 'lastSeq'>): Promise<RunRecord['status']> {
  if (!isImported(run) || run.status !== 'running' || run.lastSeq < 1) return run.status;
  const [last] = await log.read(run.runId, { fromSeq: run.lastSeq, toSeq: run.lastSeq });
  return shownStatusOf(run, last?.type);
}

/** shownStatus for a caller that has read the run's last event already (`lastType`). */
export function shownStatusOf(run: Pick<RunRecord, 'owner' | 'status'>, lastType: string | undefined): RunRecord['status'] {
  if (!isImported(run) || run.status !== 'running') return run.status;
  return importedOpenState(lastType) === 'suspended' ? 'suspended' : 'running';
}

const KNOWN_TYPES: Record<EventType, true> = {
  'run.started': true, 'run.resumed': true, 'run.suspended': true, 'run.completed': true, 'run.failed': true,
  'stage.started': true, 'stage.skipped': true, 'stage.completed': true, 'stage.failed': true,
  'action.started': true, 'action.completed': true, 'action.failed': true, 'action.retrying': true,
  'step.started': true, 'step.completed': true, 'step.failed': true, 'loop.iteration': true, 'value.recorded': true,
  'http.request': true, 'http.response': true, 'http.error': true, 'fetch.completed': true,
  'store.write': true, 'store.intent': true, 'checkpoint.advanced': true, 'page.completed': true,
  'pause.created': true, 'pause.resumed': true, 'wait.registered': true, 'webhook.received': true, 'wait.completed': true,
};

function checkedEvent(raw: unknown, i: number): Omit<StoredEvent, 'runId'> {
  const at = `events[${i}]`;
  const e = object(raw, at);
  const seq = integer(e['seq'], `${at}.seq`);
  if (seq !== i + 1) throw new BundleError(`${at}.seq`, `expected ${i + 1} (seqs run 1, 2, 3, … in order) but got: ${seq}`);
  const type = string(e['type'], `${at}.type`);
  if (!Object.hasOwn(KNOWN_TYPES, type)) throw new BundleError(`${at}.type`, `not an event type of this engine: ${short(type)}`);
  const payload = object(e['payload'], `${at}.payload`);
  try {
    asLogged(payload, `${at}.payload`);
  } catch (error) {
    if (error instanceof UnloggableValueError) throw new BundleError(`${at}.payload`, error.message);
    throw error;
  }
  return { seq, type: type as EventType, stepPath: string(e['stepPath'], `${at}.stepPath`, true), payload: payload as unknown as EventPayloads[EventType], recordedAt: integer(e['recordedAt'], `${at}.recordedAt`) } as Omit<StoredEvent, 'runId'>;
}

function object(value: unknown, at: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BundleError(at, `expected an object but got: ${short(value)}`);
  return value as Record<string, unknown>;
}

function array(value: unknown, at: string): unknown[] {
  if (!Array.isArray(value)) throw new BundleError(at, `expected an array but got: ${short(value)}`);
  return value;
}

function string(value: unknown, at: string, emptyOk = false): string {
  if (typeof value !== 'string' || (!emptyOk && value === '')) throw new BundleError(at, `expected a${emptyOk ? '' : ' non-empty'} string but got: ${short(value)}`);
  return value;
}

function integer(value: unknown, at: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new BundleError(at, `expected an integer >= 0 but got: ${short(value)}`);
  return value;
}

function stringMap(value: unknown, at: string): Record<string, string> {
  const map = object(value, at);
  for (const [k, v] of Object.entries(map)) string(v, `${at}.${k}`, true);
  return map as Record<string, string>;
}

function short(value: unknown): string {
  const text = value === undefined ? 'nothing' : typeof value === 'string' ? JSON.stringify(value) : `${Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value} (${JSON.stringify(value)})`;
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

async function credentialDigestsOf(log: EventLog, runId: string): Promise<readonly CredentialDigests[] | undefined> {
  const first = (await log.read(runId, { toSeq: 1 }))[0];
  return first?.type === 'run.started' ? (first as StoredEvent<'run.started'>).payload.credentials : undefined;
}
