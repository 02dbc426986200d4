/**
 * The crash lab's answer proxy: the lab's two runs talk to the API through it, so the verdict
 * compares runs that saw the same data, whatever the API answers (timestamps, counters).
 *
 * One loopback HTTP server; each source is a path prefix (`/<source>/…`) forwarded to its real
 * base URL. In `record` mode (the crash-free reference run) every request goes upstream and its
 * answer is kept under the request's identity — what a replay compares (journal/request-identity.ts):
 * method, path with query, the headers the mission sets (every header but the transport's, the
 * Idempotency-Key and credentials) and the body — with the run id and the values `now()`/`random()`
 * returned to the run taken out (lab-inputs.ts), as those legitimately differ between the runs.
 * In `replay` mode (the armed run) nothing goes upstream: a request is answered with the first
 * unused recorded answer of its identity — so requests of a concurrent loop, which reach the
 * proxy in another order than the reference's did, each get their own answer, and identical
 * requests go in order among themselves — and a request carrying an Idempotency-Key already
 * answered gets that key's answer again — the behaviour of an API that honours idempotency keys.
 * A request whose method, URL and headers the reference sent but none with its body (a value
 * computed from `now()`, a formatted date, is not taken out) gets the first such answer and is
 * counted as matched without its body: which answer it was owed is not known, and the verdict
 * says so. A path segment, query value or header that held one of the reference's `now()` or
 * `timestamp()` values matches the armed run's value of the same form, no earlier, at that place
 * (a read goes out before its events are durable, so the armed run's log cannot be asked then);
 * `report` confirms each such value against the armed run's finished log, and one it does not
 * hold makes the request one the reference never made. The proxy counts, per key, the requests it
 * saw and the reference writes each key was matched to (1 is exactly-once), and names every
 * request the reference run never made. After a crash, `rewind` puts back the reads whose answer
 * the dead process received but never logged, so its resume is served what the reference saw.
 *
 * The armed run reaches each source under a prefix of its own (`/~armed/<source>/…`, stripped
 * before its identity): a run's sync checkpoints are kept per API URL, so through the reference's
 * URLs the armed run read the checkpoint the reference had just advanced and asked for
 * `?since=<then>` — a request the reference never made — where the reference, a first run of
 * that URL, had fetched from the start. Through its own URLs it starts from the same nothing.
 */
import { isRetriedStatus } from '../http/retry-policy.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hash } from 'node:crypto';
import type { StoredEvent } from '../log/events.js';
import { canonicalJson } from '../eval/values.js';
import { RunSpecifics, withoutRunSpecifics } from './lab-inputs.js';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

interface Recorded {
  /** `METHOD /source/path?query`, the run id taken out: what a report names. */
  identity: string;
  method: string;
  /** The request target (`/source/path?query`) as sent. */
  target: string;
  /** The mission's headers as sent, the run id taken out, and their sha256. */
  missionHeaders: Record<string, string>;
  headers: string;
  /** Its path, query and headers with the places that held one of the reference's now()/timestamp() values, once known. */
  template?: RequestTemplate;
  /** The body as sent, and its key once known (the reference's inputs taken out). */
  body: Buffer;
  bodyKey?: string;
  answer: Answer;
  /** Replay: the idempotency key that consumed it, or '' for a keyless request. */
  usedBy: string | null;
  /** Replay: when it was consumed (rewind keeps the earliest a dead process logged). */
  usedAt: number;
  /** Replay: the identity of the armed run's request that consumed it (its URL may differ by a now()). */
  usedAs?: string;
  /**
   * Record: the reference run had given up on the request (its `timeout`) before the API answered;
   * the answer arrived at the proxy only. Served to the armed run only when nothing else matches.
   */
  abandoned?: boolean;
}

/** Reads a run's log as it stands (the lab's views): its recorded now()/random() values. */
export type RunEvents = (runId: string) => Promise<readonly StoredEvent[]>;

export interface KeyCount {
  idempotencyKey: string;
  requests: number;
  /** Reference writes this key was matched to: 1 is exactly-once. */
  effects: number;
}

export interface ProxyReport {
  /** Per Idempotency-Key the armed run sent. */
  keys: KeyCount[];
  /** Writes the reference made that the armed run never made (`METHOD /source/path`). */
  lost: string[];
  /** Requests the reference never made (answered 502), or a keyless write sent once more. */
  unexpected: string[];
  /** Requests answered by method, URL and headers only: the reference sent none with their body. */
  bodyUnmatched: string[];
  /**
   * Requests matched to one of the reference's with a now()/timestamp() value of their own where
   * the reference's held one of its own (in a path segment, query value or header), confirmed
   * against the armed run's log.
   */
  matchedByInput: string[];
  /**
   * Requests of the reference answered by a redirect to another origin (`METHOD /source/path →
   * URL`): the runs followed it past the proxy, so what each was answered there was not held equal.
   */
  offProxy: string[];
  /** Requests of the armed run served an answer the reference gave up on before it came (its timeout). */
  abandonedServed: string[];
  /** Reads and writes answered from the recording. */
  answered: number;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
/**
 * Headers that are no part of what the mission asked: the transport's (fetch adds some), the
 * engine's Idempotency-Key (it names the run's effect) and credentials, which may be refreshed
 * between the runs.
 */
const NOT_IDENTITY = new Set([
  'host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'user-agent', 'accept-encoding', 'accept-language',
  'idempotency-key', 'authorization', 'proxy-authorization', 'cookie',
]);
/** Hop-by-hop and length headers are the proxy's own business, not part of an answer. */
const DROP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'content-encoding']);
const RUN_PLACEHOLDER = '<run>';
/** Where the armed run reaches the sources (`~` is in no source name). */
const ARMED_PREFIX = '/~armed';

/** Every source URL a lab's proxy of this process gave its runs → the base URL it forwarded to. */
const PROXIED = new Map<string, string>();

export class AnswerProxy {
  private mode: 'record' | 'replay' = 'record';
  private runIds: { record: Promise<string>; replay: Promise<string> };
  private setRunId: { record: (id: string) => void; replay: (id: string) => void };
  private readonly recorded: Recorded[] = [];
  /** The armed run's writes by Idempotency-Key: the answer given, and the body first sent under the key. */
  private readonly byKey = new Map<string, { answer: Answer; requests: number; effects: number; body: string; entry?: Recorded }>();
  private readonly unexpected: string[] = [];
  private readonly bodyUnmatched: string[] = [];
  private readonly offProxy: string[] = [];
  private readonly abandonedServed: string[] = [];
  /** Requests matched to the reference's with a now()/timestamp() value of theirs at its place. */
  private readonly matchedByInput: { request: string; values: string[] }[] = [];
  private readonly specifics = new Map<string, RunSpecifics>();
  private answered = 0;
  private uses = 0;
  private base = '';

  private constructor(
    private readonly server: Server,
    private readonly upstreams: Record<string, string>,
    private readonly events: RunEvents | undefined,
  ) {
    let record!: (id: string) => void;
    let replay!: (id: string) => void;
    this.runIds = { record: new Promise((r) => (record = r)), replay: new Promise((r) => (replay = r)) };
    this.setRunId = { record, replay };
  }

  /**
   * The real base URL behind `url` when it is a source URL a lab's proxy of this process gave its
   * runs: their `--source` options name the proxy, which is gone once its lab ends.
   */
  static upstreamBehind(url: string): string | undefined {
    return PROXIED.get(url);
  }

  /**
   * Starts the proxy for `upstreams` (source name → real base URL). `events` reads a run's log, so
   * that the values `now()`/`random()` returned to it are taken out of its bodies; without it a
   * body is compared with only the run id taken out.
   */
  static async start(upstreams: Record<string, string>, events?: RunEvents): Promise<AnswerProxy> {
    let proxy: AnswerProxy | undefined;
    const server = createServer((req, res) => void proxy!.handle(req, res));
    proxy = new AnswerProxy(server, upstreams, events);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const run of ['reference', 'armed'] as const) {
      for (const [name, url] of Object.entries(proxy.sources(run))) PROXIED.set(url, upstreams[name]!);
    }
    return proxy;
  }

  /**
   * The `--source` overrides that send each source through the proxy: the reference run's, or the
   * armed run's (other URLs, so none of the reference's checkpoints, which are per API URL).
   */
  sources(run: 'reference' | 'armed' = 'reference'): Record<string, string> {
    const root = run === 'armed' ? `${this.base}${ARMED_PREFIX}` : this.base;
    return Object.fromEntries(Object.keys(this.upstreams).map((name) => [name, `${root}/${encodeURIComponent(name)}`]));
  }

  /** True when a logged request URL went through this proxy. */
  carried(url: string): boolean {
    return url.startsWith(`${this.base}/`);
  }

  /** The run whose requests are being recorded (its id is normalised out of identities). */
  recording(runId: string): void {
    this.setRunId.record(runId);
  }

  /** From now on answer from the recording; `runId` is the armed run's id once known. */
  replay(): void {
    this.mode = 'replay';
  }

  replaying(runId: string): void {
    this.setRunId.replay(runId);
  }

  /**
   * After the armed run's process died: every keyless read it was answered that its log does not
   * hold is handed out again (its resume sends it again, and must see what the reference saw).
   */
  async rewind(events: readonly StoredEvent[]): Promise<void> {
    const runId = await this.runIds.replay;
    const requests = new Map<string, { method: string; url: string }>();
    const logged = new Map<string, number>();
    for (const event of events) {
      if (event.type === 'http.request') requests.set(`${event.payload.effectId}#${event.payload.attempt}`, event.payload.request);
      if (event.type !== 'http.response' && event.type !== 'http.error') continue;
      const request = requests.get(`${event.payload.effectId}#${event.payload.attempt}`);
      if (request === undefined || !SAFE.has(request.method.toUpperCase()) || !this.carried(request.url)) continue;
      const identity = identityOf(request.method, unprefixed(request.url.slice(this.base.length)), runId);
      logged.set(identity, (logged.get(identity) ?? 0) + 1);
    }
    // The reads the dead process logged are the ones it was answered first (those in flight when
    // it died are the latest): of each method and URL, the earliest answered stay used.
    const seen = new Map<string, number>();
    const reads = this.recorded.filter((e) => e.usedBy === '' && SAFE.has(e.method)).sort((a, b) => a.usedAt - b.usedAt);
    for (const entry of reads) {
      const asked = entry.usedAs ?? entry.identity;
      const n = (seen.get(asked) ?? 0) + 1;
      seen.set(asked, n);
      if (n > (logged.get(asked) ?? 0)) {
        entry.usedBy = null;
        delete entry.usedAs;
      }
    }
  }

  /**
   * What the proxy saw. `armedEvents`, the armed run's log once it is complete, confirms each
   * request matched by a now()/timestamp() value at a place of the reference's: a value the armed
   * run's log does not hold as one of its own makes the request one the reference never made.
   */
  report(armedEvents: readonly StoredEvent[] = []): ProxyReport {
    // A write the reference abandoned (timed out) and never logged an answer to is not one it made;
    // its retry under the same key is, and is recorded after it.
    const lost = this.recorded.filter((r) => !SAFE.has(r.method) && r.usedBy === null && r.abandoned !== true).map((r) => r.identity);
    const keys = [...this.byKey].map(([idempotencyKey, k]) => ({ idempotencyKey, requests: k.requests, effects: k.effects }));
    const armedInputs = this.matchedByInput.length > 0 ? new RunSpecifics('', armedEvents).inputs : new Map<string, string>();
    const explained = (m: { values: string[] }) => m.values.every((v) => isInput(v, armedInputs));
    const unexplained = this.matchedByInput
      .filter((m) => !explained(m))
      .map((m) => `${m.request}, whose ${m.values.join(', ')} matched a now()/timestamp() of the reference's but is none the run recorded`);
    return {
      keys: keys.sort((a, b) => a.idempotencyKey.localeCompare(b.idempotencyKey)),
      lost,
      unexpected: [...this.unexpected, ...unexplained],
      bodyUnmatched: [...this.bodyUnmatched],
      offProxy: [...this.offProxy],
      abandonedServed: [...this.abandonedServed],
      matchedByInput: this.matchedByInput.filter(explained).map((m) => m.request),
      answered: this.answered,
    };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const body = await readBody(req);
      const method = (req.method ?? 'GET').toUpperCase();
      // The armed run's prefix is where it came from, not part of what it asked.
      const target = this.mode === 'record' ? (req.url ?? '/') : unprefixed(req.url ?? '/');
      if (this.mode === 'record') {
        // The run gives up on a request slower than its timeout (the connection closes); the API's
        // late answer is then none the run saw, and must not be served as one of its answers.
        let gone = false;
        res.once('close', () => (gone ||= !res.writableFinished));
        const entry = await this.record(method, target, req, body);
        if (gone || res.destroyed) entry.abandoned = true;
        res.writeHead(entry.answer.status, entry.answer.headers);
        res.end(entry.answer.body);
        return;
      }
      const answer = await this.answer(method, target, req, body);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `crash lab proxy: ${error instanceof Error ? error.message : String(error)}` }));
    }
  }

  private async record(method: string, target: string, req: IncomingMessage, body: Buffer): Promise<Recorded> {
    const slash = target.indexOf('/', 1);
    const name = decodeURIComponent(target.slice(1, slash === -1 ? undefined : slash));
    const upstream = this.upstreams[name];
    if (upstream === undefined) throw new Error(`no source "${name}" behind this proxy`);
    const rest = slash === -1 ? '' : target.slice(slash);
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined && !DROP_HEADERS.has(key)) headers[key] = Array.isArray(value) ? value.join(', ') : value;
    }
    const url = upstream.replace(/\/$/, '') + rest;
    const response = await fetch(url, {
      method,
      headers,
      ...(body.length > 0 && method !== 'GET' && method !== 'HEAD' ? { body: new Uint8Array(body) } : {}),
      redirect: 'manual',
    });
    const answer: Answer = { status: response.status, headers: keepHeaders(response.headers), body: Buffer.from(await response.arrayBuffer()) };
    // A run follows a GET's redirect (http/client.ts): one into the source must come back through
    // here, under the source's prefix, or a root-relative Location would miss it.
    if (answer.headers.location !== undefined) {
      answer.headers.location = this.throughProxy(answer.headers.location, url, name, upstream);
      if (!this.carried(answer.headers.location) && SAFE.has(method)) this.offProxy.push(`${method} ${target} → ${answer.headers.location}`);
    }
    const runId = await this.runIds.record;
    const sent = missionHeaders(req, runId);
    const entry: Recorded = { identity: identityOf(method, target, runId), method, target, missionHeaders: sent, headers: headersKey(sent), body, answer, usedBy: null, usedAt: 0 };
    this.recorded.push(entry);
    return entry;
  }

  /** `location` (relative to `url`) as an address through this proxy when it is under `upstream`, else made absolute. */
  private throughProxy(location: string, url: string, name: string, upstream: string): string {
    let resolved: string;
    try {
      resolved = new URL(location, url).href;
    } catch {
      return location;
    }
    const root = upstream.replace(/\/$/, '');
    if (resolved !== root && !resolved.startsWith(`${root}/`) && !resolved.startsWith(`${root}?`)) return resolved;
    return `${this.base}/${encodeURIComponent(name)}${resolved.slice(root.length)}`;
  }

  private async answer(method: string, target: string, req: IncomingMessage, body: Buffer): Promise<Answer> {
    const header = req.headers['idempotency-key'];
    const key = Array.isArray(header) ? header[0] : header;
    if (key !== undefined) {
      const known = this.byKey.get(key);
      if (known !== undefined) {
        known.requests += 1;
        // A write sent again (its process died before it logged the answer) is the logged request
        // again: under its key with another body it is a request the first never was.
        if (comparableBody(body) !== known.body) {
          this.unexpected.push(`${method} ${target} (Idempotency-Key ${key}) sent again with another body`);
          return known.answer;
        }
        // A retry after an answer the client tries again after (a 5xx, a 429, a 401 its token refresh
        // answers; http/retry-policy.ts): the reference's retry of the
        // same write got the API's next answer, recorded after it; served again, the 500 made the
        // armed run fail a write the reference made, and the lab said "not exactly-once".
        const next = known.entry !== undefined && (isRetriedStatus(known.answer.status) || known.answer.status === 401) ? await this.nextAttempt(known.entry) : undefined;
        if (next !== undefined) {
          next.usedBy = key;
          next.usedAt = ++this.uses;
          next.usedAs = known.entry!.usedAs ?? next.identity;
          known.entry = next;
          known.answer = next.answer;
          this.answered += 1;
        }
        return known.answer;
      }
    }
    const runId = await this.runIds.replay;
    const identity = identityOf(method, target, runId);
    const sent = missionHeaders(req, runId);
    const headers = headersKey(sent);
    const referenceId = await this.runIds.record;
    let candidates = this.recorded.filter((r) => r.usedBy === null && r.identity === identity && r.headers === headers);
    let varying: string[] = [];
    if (candidates.length === 0) {
      // A query value, path segment or header that is a value now()/timestamp() returned differs
      // between the runs as it does in a body. The armed run's value is not in its log yet (a read
      // is sent before its events are durable), so it matches a place where the reference's
      // request held one of its own such values by form; report() confirms it against the armed
      // run's log once that is complete.
      const parts = requestParts(target, sent);
      for (const r of this.recorded) {
        if (r.usedBy !== null || r.method !== method) continue;
        r.template ??= templateOf(requestParts(r.target, r.missionHeaders), (await this.specificsOf(referenceId, false)).inputs);
        const values = matchTemplate(r.template, parts);
        if (values === null) continue;
        if (candidates.length === 0) varying = values;
        if (values.join('\n') === varying.join('\n')) candidates.push(r);
      }
    }
    // What the reference was answered comes first; an answer it gave up on only when nothing else matches.
    candidates = [...candidates.filter((c) => c.abandoned !== true), ...candidates.filter((c) => c.abandoned === true)];
    let entry: Recorded | undefined;
    if (candidates.length > 0) {
      // The armed run's body can hold what the reference was answered and the API echoed (lab-inputs.ts).
      const bodyKey = await this.bodyKey(body, [await this.specificsOf(runId, true), await this.specificsOf(referenceId, false)]);
      for (const candidate of candidates) {
        candidate.bodyKey ??= await this.bodyKey(candidate.body, [await this.specificsOf(referenceId, false)]);
        if (candidate.bodyKey === bodyKey) {
          entry = candidate;
          break;
        }
      }
      if (entry === undefined) {
        // Same method, URL and headers, another body: the first such, not known to be the one owed.
        entry = candidates[0]!;
        this.bodyUnmatched.push(`${method} ${target}${key === undefined ? '' : ` (Idempotency-Key ${key})`}`);
      }
    }
    if (entry === undefined) {
      this.unexpected.push(`${method} ${target}${key === undefined ? '' : ` (Idempotency-Key ${key})`}`);
      if (key !== undefined) this.byKey.set(key, { answer: NEVER_MADE, requests: 1, effects: 0, body: comparableBody(body) });
      return NEVER_MADE;
    }
    if (entry.abandoned === true) this.abandonedServed.push(`${method} ${target}${key === undefined ? '' : ` (Idempotency-Key ${key})`}`);
    entry.usedBy = key ?? '';
    entry.usedAt = ++this.uses;
    entry.usedAs = identity;
    if (varying.length > 0) this.matchedByInput.push({ request: `${method} ${target}${key === undefined ? '' : ` (Idempotency-Key ${key})`}`, values: varying });
    this.answered += 1;
    if (key !== undefined) this.byKey.set(key, { answer: entry.answer, requests: 1, effects: 1, body: comparableBody(body), entry });
    return entry.answer;
  }

  /** The reference's next attempt at the request `entry` recorded (the same method, URL, headers and body), not yet served. */
  private async nextAttempt(entry: Recorded): Promise<Recorded | undefined> {
    const referenceId = await this.runIds.record;
    const specifics = [await this.specificsOf(referenceId, false)];
    entry.bodyKey ??= await this.bodyKey(entry.body, specifics);
    for (const r of this.recorded.slice(this.recorded.indexOf(entry) + 1)) {
      if (r.usedBy !== null || r.abandoned === true || r.identity !== entry.identity || r.headers !== entry.headers) continue;
      r.bodyKey ??= await this.bodyKey(r.body, specifics);
      if (r.bodyKey === entry.bodyKey) return r;
    }
    return undefined;
  }

  /**
   * A body as compared: its JSON with what legitimately differs between the runs taken out
   * (lab-inputs.ts: run ids, now()/random() values, generated ids), canonical (keys sorted); text
   * that is no JSON with the run ids taken out.
   */
  private async bodyKey(body: Buffer, specifics: readonly RunSpecifics[]): Promise<string> {
    if (body.length === 0) return '';
    const text = body.toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
    } catch {
      return `text:${specifics.reduce((t, s) => t.split(s.runId).join(RUN_PLACEHOLDER), text)}`;
    }
    return `json:${canonicalJson(withoutRunSpecifics(value, specifics))}`;
  }

  /**
   * A run's specifics from its log. `live`: the run is still going, so what its log has gained is
   * read (a write's log is on disk before it is sent, with the values it carries); a finished
   * run's log is read once.
   */
  private async specificsOf(runId: string, live: boolean): Promise<RunSpecifics> {
    let specifics = this.specifics.get(runId);
    if (specifics === undefined || live) {
      if (specifics === undefined) this.specifics.set(runId, (specifics = new RunSpecifics(runId)));
      if (this.events) specifics.add(await this.events(runId));
    }
    return specifics;
  }
}

const NEVER_MADE: Answer = {
  status: 502,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(JSON.stringify({ error: 'crash lab proxy: the crash-free reference run never made this request' })),
};

/** A target without the armed run's prefix. */
function unprefixed(target: string): string {
  return target.startsWith(`${ARMED_PREFIX}/`) ? target.slice(ARMED_PREFIX.length) : target;
}

/** A body as two sends of one request are compared: canonical JSON (keys sorted), else its text. */
function comparableBody(body: Buffer): string {
  const text = body.toString('utf8');
  try {
    return `json:${canonicalJson(JSON.parse(text) as unknown)}`;
  } catch {
    return `text:${text}`;
  }
}

function identityOf(method: string, target: string, runId: string): string {
  return `${method.toUpperCase()} ${target}`.split(runId).join(RUN_PLACEHOLDER);
}

/** The headers the mission set (names lower-cased), the run id taken out. */
function missionHeaders(req: IncomingMessage, runId: string): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || NOT_IDENTITY.has(name) || name.startsWith('sec-')) continue;
    kept[name] = (Array.isArray(value) ? value.join(', ') : value).split(runId).join(RUN_PLACEHOLDER);
  }
  return kept;
}

/** Mission headers as one sha256, names sorted. */
function headersKey(headers: Readonly<Record<string, string>>): string {
  return hash('sha256', canonicalJson(headers), 'hex');
}

/** A request's comparable places: path segments (decoded), query values in order, header values. */
interface RequestParts {
  path: string[];
  query: [string, string][];
  headers: [string, string][];
}

function requestParts(target: string, headers: Readonly<Record<string, string>>): RequestParts {
  const url = new URL(target, 'http://proxy.invalid');
  return {
    path: url.pathname.split('/').map(decodedSegment),
    query: [...url.searchParams],
    headers: Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  };
}

/** A place: its exact text, or a now()/timestamp() value of the reference's (`value`, its form). */
type Place = { exact: string } | { input: 'iso' | 'epoch'; value: string };
/** The places of a reference request in order: path segments, then query, then headers (names fixed). */
interface RequestTemplate {
  names: string;
  places: Place[];
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const EPOCH_MS = /^\d{12,14}$/;

/** What must be equal for two requests to be compared place by place: the path's length, the query's and headers' names. */
function namesOf(parts: RequestParts): string {
  return JSON.stringify([parts.path.length, parts.query.map(([n]) => n), parts.headers.map(([n]) => n)]);
}

/** The texts at a request's places, in a template's order. */
function textsOf(parts: RequestParts): string[] {
  return [...parts.path, ...parts.query.map(([, v]) => v), ...parts.headers.map(([, v]) => v)];
}

function templateOf(parts: RequestParts, inputs: ReadonlyMap<string, string>): RequestTemplate {
  const place = (text: string): Place => (!isInput(text, inputs) ? { exact: text } : ISO_INSTANT.test(text) ? { input: 'iso', value: text } : EPOCH_MS.test(text) ? { input: 'epoch', value: text } : { exact: text });
  return { names: namesOf(parts), places: textsOf(parts).map(place) };
}

/**
 * The armed request's values at the template's input places when it matches (every exact place
 * equal; at an input place a value of the same form, no earlier than the reference's — the armed
 * run starts after the reference ended), else null.
 */
function matchTemplate(template: RequestTemplate, parts: RequestParts): string[] | null {
  if (namesOf(parts) !== template.names) return null;
  const texts = textsOf(parts);
  const values: string[] = [];
  for (let i = 0; i < texts.length; i++) {
    const place = template.places[i]!;
    const text = texts[i]!;
    if ('exact' in place) {
      if (place.exact !== text) return null;
      continue;
    }
    const later = place.input === 'iso' ? ISO_INSTANT.test(text) && Date.parse(text) >= Date.parse(place.value) : EPOCH_MS.test(text) && Number(text) >= Number(place.value);
    if (!later) return null;
    values.push(text);
  }
  return values.length > 0 ? values : null;
}

/** Whether `text` is one of a run's now()/timestamp() values (as its JSON or as the number's digits). */
function isInput(text: string, inputs: ReadonlyMap<string, string>): boolean {
  return inputs.has(JSON.stringify(text)) || inputs.has(text);
}

function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function keepHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, key) => {
    if (!DROP_HEADERS.has(key)) out[key] = value;
  });
  return out;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
