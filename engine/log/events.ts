/**
 * The vocabulary of the run log.
 *
 * A run is a sequence of events `(run_id, seq, type, step_path, payload, recorded_at)`. The log
 * stores them; every other view (status, timeline, store contents at a seq, replay diff) is a fold
 * over them. Events carry outputs, not just identities: a response body, the value `now()`
 * returned, the instant a timer fired. That is what lets replay answer from the log.
 *
 * `seq` starts at 1 and is assigned by the database inside the appending transaction.
 * `stepPath` is the stable position of the step in the program (see journal/step-path.ts);
 * run-level events have the empty path ''.
 */

/**
 * The format of the events a run records, written in its `run.started`. 1: before request
 * identities (a log of an older engine, no `format` field). 2: `http.request` carries `identity`.
 * 3: a single-answer `fetch.completed` says `valueInAnswer` instead of holding a second copy of
 * the body its `http.response` holds. 4: `key` as a word makes a header, query parameter or
 * setting a credential (env/credential-names.ts), and a since fetch answered 204 or with no body
 * is an empty list (fetch-step.ts); runs recorded before keep the rules they were recorded by.
 * 5: a request's identity is redacted of every credential the run was given from its first
 * request on (before, a source's credentials were known only once its first request was sent,
 * so that request's identity could hold one: HttpRuntime.redactorBefore5).
 * 6: the value of a credential-named query parameter in a `--source` URL (`?api_key=…`) is a
 * secret the run was given: redacted from answers and taken out of identities (before, an answer
 * echoing it was logged in clear; runs recorded before keep their identities: SOURCE_SECRETS_FORMAT).
 * 7: any GET answered 204 or with no body is an empty list, as a since fetch's was from 4
 * (fetch-step.ts; before, `store response -> S` failed on its null), under `trace: minimal` a
 * loop's tolerated failure is a `step.failed` of its iteration (for-step.ts; a pure step's left none),
 * and the evaluation rules of eval/scope.ts EVAL_RULES_FORMAT (`in`, `includes`, schema arms of a
 * match expression, failures naming their transform or header, dead letters of equal items), and a
 * wait's generated path is the same in every attempt of its action (wait-step.ts).
 * 8: an `until` that holds by `length`/`count` of an object on a page that says more follow fails
 * the fetch (fetch-step.ts), a wait's `storage` keys follow the store steps' rules, a wait's
 * eventFilter reads its delivery's arrival as `now()` (never journaled), and a wait is named once
 * its registration time is taken (wait-step.ts): a run recorded before replays as it ran.
 * 9: the page-end rules (pagination.ts `pageEndRules`): an empty page that says it failed
 * (`success: false`) fails the fetch; a cursor walk ends on a page that says it is the last
 * (`has_more: false`, `end_of_stream: true`) whatever cursor it carries; a short page's next token
 * (`nextPageToken`, `next_offset`, HubSpot's `paging.next.after`, Slack's, a text `offset`), its
 * count of records left, `done: false`, or a first page's `X-Total-Count` header above what it
 * holds says more follow (a token of 0, or `end_of_stream: true`, says none does); and a since
 * fetch without `paginate` whose answer says more follow advances no checkpoint (fetch-step.ts).
 * 10: a page's flags and counts sent as text (`"has_more": "true"`, `"total_count": "5"`,
 * `"ok": "false"`), or as 1 and 0, say what they say; and a page answered 2xx with JSend's
 * `status: "error"`, AWS's `Error`, an `errcode` / `error_code` other than 0 or a `statusCode` /
 * numeric `code` of 400 or more, and no list, is an in-band error (page-checks.ts): each was taken
 * for an empty last page, ending a walk with records missing. And a checkpoint set by hand
 * (`store … -> sync_state`) is held back by a failure a loop of its action tolerated before it,
 * not only after (checkpoints.ts); and a request path computed from data (`"/users/" + id`,
 * `concat(…)`) with a part that is null, absent or empty is refused, R4010 (fetch-step.ts); and
 * `store[true]` reads the record a boolean key is stored under (eval/scope.ts BOOLEAN_STORE_INDEX_FORMAT);
 * and a `queue` directive's dead letters of equal loop items are kept apart as `onError queue`'s are.
 * An engine reads every format up to its own and refuses a newer one.
 */
export const LOG_FORMAT = 10;

/** The log format from which the rules of 8 above hold (fetch-step.ts, wait-step.ts). */
export const WAIT_AND_UNTIL_RULES_FORMAT = 8;
/** The log format from which the page-end rules of 9 above hold (pagination.ts, fetch-step.ts). */
export const PAGE_END_RULES_FORMAT = 9;
/** The log format from which the page signal forms of 10 above are read (page-checks.ts). */
export const PAGE_SIGNAL_FORMS_FORMAT = 10;
/** The log format from which a checkpoint set by hand in sync_state is held by a failure tolerated before it in its action (checkpoints.ts). */
export const SET_CHECKPOINT_HELD_FORMAT = 10;
/** The log format from which a request path computed with a null, absent or empty part is refused (fetch-step.ts). */
export const COMPUTED_PATH_PARTS_FORMAT = 10;
/** The log format from which a `queue` directive's dead letters of equal loop items are kept apart (`~2`), as `onError queue`'s are (control-steps.ts). */
export const QUEUE_DIRECTIVE_OCCURRENCE_FORMAT = 10;

/** The log format from which a `--source` URL's credential-named query values are secrets of the run. */
export const SOURCE_SECRETS_FORMAT = 6;
/** The log format from which any GET answered 204 or with no body is an empty list (fetch-step.ts). */
export const EMPTY_READ_ANSWER_FORMAT = 7;
/** The log format from which a loop's tolerated failure under `trace: minimal` is its iteration's `step.failed` (for-step.ts). */
export const TOLERATED_MINIMAL_FAILURE_FORMAT = 7;
/** The log format from which a wait's generated path is the same in every attempt of its action (wait-step.ts). */
export const STABLE_WAIT_PATH_FORMAT = 7;
// The evaluation rules of format 7 are eval/scope.ts EVAL_RULES_FORMAT (the evaluator imports nothing of the log).

/** The format a run's events were recorded in, from its `run.started` (the log's first event). */
export function logFormatOf(events: readonly StoredEvent[]): number {
  const first = events[0];
  return first?.type === 'run.started' ? ((first.payload as EventPayloads['run.started']).format ?? 1) : 1;
}

/**
 * A recorded event. For one type, its payload is that type's; without a type argument it is the
 * union of every type's event, discriminated by `type`, so a `switch (event.type)` narrows it.
 */
export type StoredEvent<T extends EventType = EventType> = {
  [K in T]: {
    runId: string;
    seq: number;
    type: K;
    stepPath: string;
    payload: EventPayloads[K];
    /** Milliseconds since the epoch, from the engine's clock, recorded once and read back. */
    recordedAt: number;
  };
}[T];

/** The method by which a read event hands out its payload's stored text (see storedPayloadJson). */
export const STORED_PAYLOAD_JSON: unique symbol = Symbol('storedPayloadJson');

/**
 * The stored JSON text of a read event's payload while its reader still holds it unparsed (a
 * resume's reader, sqlite/read-events.ts); undefined for any other event, and once the payload
 * was used. A replayed step may compare it with the very text it would record, and parse (and
 * compare field by field) only when the two differ.
 */
export function storedPayloadJson(event: StoredEvent): string | undefined {
  return (event as { [STORED_PAYLOAD_JSON]?: () => string | undefined })[STORED_PAYLOAD_JSON]?.();
}

export type NewEvent<T extends EventType = EventType> = {
  [K in T]: { type: K; stepPath: string; payload: EventPayloads[K]; recordedAt: number };
}[T];

/** A request as recorded: secrets redacted, body as sent. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: unknown;
}

/**
 * A request's identity: method, URL (secrets redacted, auth query parameters left out), the
 * sha256 of its body's canonical JSON and that of the mission's headers. Never auth headers:
 * they may rotate between the original run and a resume without the request being any different.
 */
export interface RequestIdentity {
  method: string;
  url: string;
  /** sha256 (hex) of the body's canonical JSON; absent when the request has no body. */
  bodySha256?: string;
  /**
   * sha256 (hex) of the canonical JSON of the headers the mission gives the request (its source's
   * `headers` and a `since` header, names lower-cased, values redacted), `{}` when none: never
   * the JSON defaults, auth or Idempotency-Key. Absent in requests recorded before it existed,
   * whose headers a replay then cannot compare (`reqon verify` says so). An optional field, so no
   * new log format.
   */
  headersSha256?: string;
  /**
   * The name of the source the request went through. Two sources may share a base URL (two
   * accounts of one API under different credentials), and auth is never in the identity, so an
   * edit that moves a request to another source would otherwise replay as the same request.
   * Absent in requests recorded before it existed, whose source a replay then cannot compare
   * (`reqon verify` says so). An optional field, so no new log format.
   */
  source?: string;
  /**
   * sha256 (hex) of the values of the query parameters and mission headers whose names mark a
   * credential, which the URL and headersSha256 show only as `[REDACTED]`, with the run's settings
   * taken out (namedValuesSha256 in http/named-values.ts): an edited `page_token` or
   * `X-Customer-Token` is another request, a rotated key is not. Absent in requests recorded
   * before it existed (`reqon verify` says what it could then not compare). An optional field, so
   * no new log format.
   */
  namedValuesSha256?: string;
}

export interface RecordedResponse {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON body; `null` for an empty body. */
  body: unknown;
  /**
   * The answer had no body (204, 205, 304, or blank text), where `body` null is also a JSON `null`
   * (Firebase's "no data"): recorded by engines from log format 7, which take a GET's empty answer
   * as an empty list and its `null` as null.
   */
  empty?: true;
  /**
   * A GET or HEAD that followed redirects: the URL the answer came from (redacted), which the
   * mission never named. Informational — a replay reads the answer, not where it came from.
   */
  redirectedTo?: string;
}

export interface EventPayloads {
  /**
   * First event of every run. The mission text and options live on the run row. `forkedFrom`: the
   * run began as a copy of another run's log up to a seq (engine/executor/fork-run.ts); `format`
   * is then that log's. An optional field, so no new format: older engines ignore it.
   */
  /**
   * `credentials`: salted sha256 digests of the credentials the run was given (those of at least
   * 8 characters; a fork adds its parent's), never the values. An oauth2 refresh replaces a token
   * in the --auth file: a resume or verify then still tells which of the values the mission can
   * read (`env()`) were credentials, and redacts them as the run did (http/given-credentials.ts).
   */
  /**
   * `credentialsSet` (log format 9): the names — never values — of the credentials the mission
   * reads that were set when the run started; verify replays them with stand-ins where they are not.
   */
  'run.started': { mission: string; missionHash: string; format?: number; forkedFrom?: ForkOrigin; credentials?: CredentialDigests[]; credentialsSet?: string[] };
  /** A process took the run over: after a crash, a pause, or a lease expiry. */
  /** `missionHash`: the run carries on with an edited mission from here (it replayed the log). */
  'run.resumed': { reason: 'crash' | 'pause' | 'lease-expired' | 'manual'; owner: string; replayFromSeq: number; missionHash?: string };
  'run.suspended': { reason: 'timer' | 'webhook' | 'wait'; dueAt?: number };
  'run.completed': { actionsRun: string[] };
  'run.failed': { error: ErrorInfo };

  'stage.started': { index: number; actions: string[] };
  'stage.skipped': { index: number; actions: string[] };
  'stage.completed': { index: number };
  'stage.failed': { index: number; error: ErrorInfo };
  'action.started': { action: string; attempt: number };
  'action.completed': { action: string; outcome: 'done' | 'skipped' | 'queued' | 'jumped'; jumpTo?: string };
  'action.failed': { action: string; error: ErrorInfo };
  'action.retrying': { action: string; attempt: number; delayMs: number };

  'step.started': { stepType: string; line: number };
  /**
   * `response` when the step replaced it (map, apply, wait) and `bind` when it bound a variable
   * (let, apply … as): what the inspector needs to show state at any seq without re-running.
   */
  'step.completed': { stepType: string; response?: unknown; bind?: { name: string; value: unknown } };
  'step.failed': { stepType: string; error: ErrorInfo };
  'loop.iteration': { index: number; key: string; skipped?: boolean };

  /** A non-deterministic input: `now()`, `timestamp()`, `any of`, a jitter delay. */
  /**
   * `key`: of a `last-sync` read, the checkpoint it read; `store`: of a loop's `store-read`, the
   * store it read — compared on replay, so an edit that reads another diverges (absent in logs
   * recorded before 2026-12-05, which are compared on the value alone).
   */
  /** `api` (a `last-sync`, log format 9): the API whose checkpoint was read (supersededSync). */
  'value.recorded': { source: 'now' | 'timestamp' | 'random' | 'jitter' | 'store-read' | 'last-sync'; value: unknown; key?: string; store?: string; api?: string };

  /** Intent: committed durably before the request leaves the process. */
  /**
   * `identity` (logs of format 2 on): what replay compares with the request the mission asks
   * for when it reaches this effect again (journal/request-identity.ts).
   */
  'http.request': { effectId: string; attempt: number; request: RecordedRequest; idempotencyKey?: string; identity?: RequestIdentity };
  /** Outcome of one attempt. */
  'http.response': { effectId: string; attempt: number; response: RecordedResponse; durationMs: number; verdict: AttemptVerdict; retryInMs?: number };
  'http.error': { effectId: string; attempt: number; error: ErrorInfo; durationMs: number; verdict: AttemptVerdict; retryInMs?: number };
  /**
   * The step's final answer after retries and pagination (what `response` became). A paginated
   * fetch's items are in its page responses. A single-answer fetch's `response` is its last
   * `http.response` body, said by `valueInAnswer` (format 3 on; the body is not logged twice), or
   * `value` when it is not that body (`[]` for a since fetch answered 304) or the log predates it.
   */
  'fetch.completed': { effectId: string; pages: number; items?: number; truncated?: boolean; status: number; value?: unknown; valueInAnswer?: true };

  /** A record written to a store; `record` is the record as stored (after any upsert merge). */
  /** `batch`: on the first write of each batch (format 2 on), the batch's id — its crash-point key. */
  /**
   * `op: 'delete'` (`delete S[k]`): the record under `key` removed; `record` is null and `removed`
   * says whether there was one (deleting an absent key is no error). No format bump for it: an
   * engine that predates it refuses such a log loudly, never misreads it — its store fold rejects
   * a null record (memory-fold.ts `assertRecord`), and its replay of `delete S[k]` asks for an
   * HTTP request (or refuses the mission, E3038) where the log holds a store.write, a divergence.
   */
  /**
   * `planned`: the record as the mission planned it, where `record` (what was stored) need not be
   * it — an upsert's fields (merged into what the key held), a write to a file or PostgREST store
   * (which may add fields). A replay compares it exactly; logs written before it have none, and
   * there a planned record is only checked to be contained in what was stored (verify says so).
   */
  'store.write': { effectId: string; store: string; key: string; record: unknown; op: StoreOp; batch?: string; removed?: boolean; planned?: unknown };
  /** Intent before an external store write (file, postgrest), committed durably first. */
  'store.intent': { effectId: string; store: string; keys: string[] };

  'checkpoint.advanced': {
    key: string;
    syncedAt: number;
    records?: number;
    /**
     * The base URL the run's `--source` gave the fetch's source, when not the mission's own: a
     * checkpoint is of the API it was fetched from (lastCheckpoint reads only the same API's).
     */
    api?: string;
    /**
     * Of a bare `lastSync` (keyed by source and path alone): the advancing request's query
     * (`?status=open`, '' for none), so a later run asking with another can be told it starts
     * from a checkpoint other records advanced.
     */
    query?: string;
    /** sha256 (hex) of that query before redaction, its parameters decoded and sorted: what is compared. */
    querySha256?: string;
  };
  'page.completed': { effectId: string; page: number; cursor?: unknown; records: number; done: boolean };

  'pause.created': { pauseId: string; dueAt?: number; webhookPath?: string };
  /** `eventId`: the inbox delivery that resumed it, claimed in the same transaction. */
  'pause.resumed': { pauseId: string; by: 'timer' | 'webhook' | 'cli' | 'studio' | 'api'; payload?: unknown; eventId?: string };
  /**
   * `filterOnDelivery`: the eventFilter's `.field` reads the delivery (wait-step.ts). Absent in
   * runs recorded before, whose filter read the current record first (a loop's item).
   */
  'wait.registered': { waitId: string; path: string; expiresAt: number; expectedEvents: number; filterOnDelivery?: true };
  /**
   * `receivedAt`: when the delivery reached the inbox, the instant the wait's eventFilter reads as
   * `now()` (wait-step.ts). Absent in runs recorded before: their filters read the claim's time.
   */
  'webhook.received': { waitId: string; eventId: string; payload: unknown; receivedAt?: number };
  /**
   * `nonBlocking`: a `timeout: 0` wait, which takes what has arrived and carries on with nothing
   * when nothing has (wait-step.ts). Absent in runs recorded before it, whose such wait failed.
   */
  'wait.completed': { waitId: string; events: number; timedOut: boolean; nonBlocking?: true };
}

export type EventType = keyof EventPayloads;

/**
 * The events a run's summary reads one by one (inspect/run-summary.ts: those whose order or
 * payload it needs; it counts the rest). A few per run, so the log indexes them (SQLite migration
 * 8, PostgreSQL 5, which name these types literally) and `read` with exactly these types reads
 * them through that index instead of every row of a long run.
 */
export const SUMMARY_EVENT_TYPES: readonly EventType[] = [
  'run.started',
  'step.failed',
  'run.resumed',
  'run.suspended',
  'pause.created',
  'wait.registered',
  'pause.resumed',
  'wait.completed',
  'run.completed',
  'run.failed',
];

/** Every one of `types` is a summary type, so the summary index (SQLite migration 8) holds all their rows. */
export function onlySummaryTypes(types: readonly string[]): boolean {
  return types.length > 0 && types.every((t) => (SUMMARY_EVENT_TYPES as readonly string[]).includes(t));
}

/** Whether `types` are SUMMARY_EVENT_TYPES (in any order): a read the summary index answers. */
export function isSummaryRead(types: readonly EventType[]): boolean {
  return types.length === SUMMARY_EVENT_TYPES.length && SUMMARY_EVENT_TYPES.every((t) => types.includes(t));
}

/** What a store write does: replace the record, merge into it, or remove it. */
export type StoreOp = 'set' | 'upsert' | 'delete';

/**
 * Where a fork came from, and who named the effects of each stretch of its log. An effect id (and
 * so an Idempotency-Key, and a derived record key) hashes a run id: the copied prefix keeps the ids
 * its recorder gave them — `identities[i].runId` for seq <= `identities[i].toSeq`, ascending — and
 * everything after the last `toSeq` is named by the fork's own id (journal/fork-identity.ts).
 */
/** Salted digests of credentials (http/given-credentials.ts). */
export interface CredentialDigests {
  salt: string;
  sha256: string[];
}

export interface ForkOrigin {
  runId: string;
  atSeq: number;
  identities: { toSeq: number; runId: string }[];
  /** The parent was imported from another log: what the fork copied of it (its checkpoints) is none of this log's. */
  imported?: true;
}

/** What followed an HTTP attempt: another attempt (retry, refresh-auth), or the final answer. */
export type AttemptVerdict = 'success' | 'allowed' | 'retry' | 'refresh-auth' | 'fail';

/** The `code` of a run's failure when its replay diverged from its log (journal/nondeterminism-error.ts). */
export const NONDETERMINISM_CODE = 'NONDETERMINISM';

/**
 * The `code` of a run the crash lab stopped (its `run.failed`, written from outside the run's walk
 * while it waited or ran): no step's failure, so no replay derives it (executor/verify.ts).
 */
export const LAB_STOPPED_CODE = 'crash-lab-stopped';
/**
 * The `code` of a run failed at its resume because a later run synced what it had fetched
 * (executor/run-resume.ts supersededSync): written before any replay, so none derives it either.
 */
export const SYNC_SUPERSEDED_CODE = 'sync-superseded';
/** The codes of failures written from outside a run's walk: verify reports where they stopped it, as not checked. */
export const STOPPED_FROM_OUTSIDE_CODES: ReadonlySet<string> = new Set([LAB_STOPPED_CODE, SYNC_SUPERSEDED_CODE]);

export interface ErrorInfo {
  code: string;
  message: string;
  retryable?: boolean;
  /** Where a step's failure happened, `file:line:column` (of the failing expression, else the step). */
  at?: string;
}

/** A failure as every surface says it: `FILE:LINE:COL: message` when it is known where it happened. */
export function failureText(error: Pick<ErrorInfo, 'message' | 'at'>): string {
  return error.at !== undefined ? `${error.at}: ${error.message}` : error.message;
}

/** How much of a failure's message a summary carries (a run's list entry, its failures list). */
export const SUMMARY_MESSAGE_CHARS = 2000;

/**
 * `message` as a summary carries it: whole up to SUMMARY_MESSAGE_CHARS, else its start and how
 * long it is. A message can be anything a mission computed (`abort response.error` of a 50 MB
 * answer); every list of runs carries its summary, so one such run made the runs table too big
 * to send. The run's events keep the whole message.
 */
export function summaryMessage(message: string): string {
  if (message.length <= SUMMARY_MESSAGE_CHARS) return message;
  let end = SUMMARY_MESSAGE_CHARS;
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // never half a surrogate pair
  return `${message.slice(0, end)}${CUT_NOTE_START}${message.length}${CUT_NOTE_END}`;
}
const CUT_NOTE_START = '… (';
const CUT_NOTE_END = " characters; the run's events hold the whole message)";

/** What of the whole message a summaryMessage holds: the message, or the start it was cut to. */
export function summaryPrefix(summary: string): string {
  if (!summary.endsWith(CUT_NOTE_END)) return summary;
  const at = summary.lastIndexOf(CUT_NOTE_START);
  return at < 0 ? summary : summary.slice(0, at);
}
