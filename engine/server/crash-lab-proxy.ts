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
 * says so. The proxy counts, per key, the requests it
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
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hash } from 'node:crypto';
import type { StoredEvent } from '../log/events.js';
import { canonicalJson } from '../eval/values.js';
import { varyingInputs, withoutRunSpecifics } from './lab-inputs.js';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

interface Recorded {
  /** `METHOD /source/path?query`, the run id taken out: what a report names. */
  identity: string;
  method: string;
  /** sha256 of the mission's headers as sent, the run id taken out. */
  headers: string;
  /** The body as sent, and its key once known (the reference's inputs taken out). */
  body: Buffer;
  bodyKey?: string;
  answer: Answer;
  /** Replay: the idempotency key that consumed it, or '' for a keyless request. */
  usedBy: string | null;
  /** Replay: when it was consumed (rewind keeps the earliest a dead process logged). */
  usedAt: number;
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

export class AnswerProxy {
  private mode: 'record' | 'replay' = 'record';
  private runIds: { record: Promise<string>; replay: Promise<string> };
  private setRunId: { record: (id: string) => void; replay: (id: string) => void };
  private readonly recorded: Recorded[] = [];
  private readonly byKey = new Map<string, { answer: Answer; requests: number; effects: number }>();
  private readonly unexpected: string[] = [];
  private readonly bodyUnmatched: string[] = [];
  private readonly inputs = new Map<string, Map<string, string>>();
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
      const n = (seen.get(entry.identity) ?? 0) + 1;
      seen.set(entry.identity, n);
      if (n > (logged.get(entry.identity) ?? 0)) entry.usedBy = null;
    }
  }

  report(): ProxyReport {
    const lost = this.recorded.filter((r) => !SAFE.has(r.method) && r.usedBy === null).map((r) => r.identity);
    const keys = [...this.byKey].map(([idempotencyKey, k]) => ({ idempotencyKey, requests: k.requests, effects: k.effects }));
    return {
      keys: keys.sort((a, b) => a.idempotencyKey.localeCompare(b.idempotencyKey)),
      lost,
      unexpected: [...this.unexpected],
      bodyUnmatched: [...this.bodyUnmatched],
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
      const answer = this.mode === 'record' ? await this.record(method, target, req, body) : await this.answer(method, target, req, body);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `crash lab proxy: ${error instanceof Error ? error.message : String(error)}` }));
    }
  }

  private async record(method: string, target: string, req: IncomingMessage, body: Buffer): Promise<Answer> {
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
    if (answer.headers.location !== undefined) answer.headers.location = this.throughProxy(answer.headers.location, url, name, upstream);
    const runId = await this.runIds.record;
    this.recorded.push({ identity: identityOf(method, target, runId), method, headers: headersKey(req, runId), body, answer, usedBy: null, usedAt: 0 });
    return answer;
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
        return known.answer;
      }
    }
    const runId = await this.runIds.replay;
    const identity = identityOf(method, target, runId);
    const headers = headersKey(req, runId);
    const candidates = this.recorded.filter((r) => r.usedBy === null && r.identity === identity && r.headers === headers);
    let entry: Recorded | undefined;
    if (candidates.length > 0) {
      const bodyKey = await this.bodyKey(body, runId, true);
      const referenceId = await this.runIds.record;
      for (const candidate of candidates) {
        candidate.bodyKey ??= await this.bodyKey(candidate.body, referenceId, false);
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
      if (key !== undefined) this.byKey.set(key, { answer: NEVER_MADE, requests: 1, effects: 0 });
      return NEVER_MADE;
    }
    entry.usedBy = key ?? '';
    entry.usedAt = ++this.uses;
    this.answered += 1;
    if (key !== undefined) this.byKey.set(key, { answer: entry.answer, requests: 1, effects: 1 });
    return entry.answer;
  }

  /**
   * A body as compared: its JSON with the run id and the run's now()/random() values taken out,
   * canonical (keys sorted); text that is no JSON with the run id taken out. `live`: the run is
   * still going, so its log is read again (a write's log is on disk before it is sent, with the
   * values it carries); a finished run's is read once.
   */
  private async bodyKey(body: Buffer, runId: string, live: boolean): Promise<string> {
    if (body.length === 0) return '';
    const text = body.toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
    } catch {
      return `text:${text.split(runId).join(RUN_PLACEHOLDER)}`;
    }
    let inputs = live ? undefined : this.inputs.get(runId);
    if (inputs === undefined) {
      inputs = this.events ? varyingInputs(await this.events(runId)) : new Map<string, string>();
      if (!live) this.inputs.set(runId, inputs);
    }
    return `json:${canonicalJson(withoutRunSpecifics(value, runId, inputs))}`;
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

function identityOf(method: string, target: string, runId: string): string {
  return `${method.toUpperCase()} ${target}`.split(runId).join(RUN_PLACEHOLDER);
}

/** The headers the mission set (names lower-cased, sorted), the run id taken out, as a sha256. */
function headersKey(req: IncomingMessage, runId: string): string {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || NOT_IDENTITY.has(name) || name.startsWith('sec-')) continue;
    kept[name] = (Array.isArray(value) ? value.join(', ') : value).split(runId).join(RUN_PLACEHOLDER);
  }
  return hash('sha256', canonicalJson(kept), 'hex');
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
