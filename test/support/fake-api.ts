/**
 * A real HTTP server on 127.0.0.1 for tests: scripted answers per `METHOD /path?query`, every
 * request recorded (method, path with query, headers, parsed body), and mutating requests counted
 * per Idempotency-Key — the server-side truth for "every effect applied exactly once".
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeReply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Raw body text instead of JSON. */
  raw?: string;
  /** Raw body bytes instead of JSON (a body in another encoding than UTF-8). */
  bytes?: Buffer;
}

export type Handler = (req: RecordedRequest) => FakeReply | Promise<FakeReply>;

export interface RecordedRequest {
  method: string;
  /** Path and query as received, e.g. `/items?offset=2`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export class FakeApi {
  readonly requests: RecordedRequest[] = [];
  /** Logical effects applied, per Idempotency-Key (a replayed key with the same body is not applied again). */
  readonly applied = new Map<string, number>();
  private readonly routes = new Map<string, Handler | FakeReply[]>();
  private readonly answered = new Map<string, FakeReply>();
  private server: Server | undefined;
  url = '';

  /**
   * Answer `METHOD /path?query` with a handler or a sequence of replies (the last repeats);
   * `METHOD /path?*` answers that path with any query no exact route names.
   */
  on(key: string, answer: Handler | FakeReply | FakeReply[]): this {
    this.routes.set(key, typeof answer === 'function' || Array.isArray(answer) ? answer : [answer]);
    return this;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const recorded: RecordedRequest = {
          method: req.method ?? 'GET',
          url: req.url ?? '/',
          headers: req.headers,
          body: text === '' ? undefined : safeJson(text),
        };
        this.requests.push(recorded);
        void this.answer(recorded).then((reply) => {
          const status = reply.status ?? 200;
          res.writeHead(status, { 'content-type': 'application/json', ...reply.headers });
          res.end(reply.bytes ?? reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body)));
        });
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  /** `METHOD url` of every request, in order. */
  lines(): string[] {
    return this.requests.map((r) => `${r.method} ${r.url}`);
  }

  private async answer(req: RecordedRequest): Promise<FakeReply> {
    const key = req.headers['idempotency-key'];
    if (typeof key === 'string' && this.answered.has(key)) return this.answered.get(key)!;
    const route = this.routes.get(`${req.method} ${req.url}`) ?? this.routes.get(`${req.method} ${req.url.split('?')[0]}?*`);
    let reply: FakeReply;
    if (!route) reply = { status: 404, body: { error: `no fake route for ${req.method} ${req.url}` } };
    else if (typeof route === 'function') reply = await route(req);
    else reply = route.length > 1 ? route.shift()! : route[0]!;
    if (typeof key === 'string' && (reply.status ?? 200) < 300) {
      this.answered.set(key, reply);
      this.applied.set(key, (this.applied.get(key) ?? 0) + 1);
    }
    return reply;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
