/**
 * The studio over HTTP + WebSocket on 127.0.0.1, for the browser build of the renderer.
 *
 *   GET  /…                 renderer/dist (static; index.html at /)
 *   POST /api/<channel>     JSON request body → 200 JSON response, or a ProtocolError
 *                           `{code, message, retryable}` with a 4xx/5xx status
 *   GET  /ws                WebSocket; each push is one text frame `{"channel": …, "payload": …}`
 *
 * Security: the server binds 127.0.0.1 only, and every API request and WebSocket must carry the
 * per-session token — 401 otherwise. The printed URL holds it once (`/?token=…`): that first load
 * is answered with a 303 to the same address without the token, setting it as an HttpOnly,
 * SameSite=Strict cookie (`reqon-studio-PORT`, since cookies do not tell ports apart), so the token
 * leaves the address bar and history and page scripts never see it. After that the page
 * authenticates by the cookie; scripts and tests may send the `x-reqon-token` header (API) or
 * `?token=` (WebSocket) instead. DNS rebinding is stopped by the Host check (only
 * 127.0.0.1:PORT and localhost:PORT; 421 otherwise) and CSRF by the Origin check (a present
 * Origin must be this server's, and a request authenticated by the cookie must have one; 403
 * otherwise) plus the JSON content type, which a cross-site form cannot send. Every response says
 * `Referrer-Policy: no-referrer` and carries the CSP of csp.ts.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { isRequestChannel } from '../protocol/channels.js';
import type { PushChannel, Pushes, RequestChannel } from '../protocol/protocol.js';
import { headerCsp } from './csp.js';
import { resolveStatic } from './static-files.js';
import { httpStatusOf, StudioError, toProtocolError } from './studio-error.js';
import type { StudioService } from './studio-service.js';

export interface StudioServerOptions {
  service: StudioService;
  /** The renderer's build output (renderer/dist). */
  staticDir: string;
  /** 0 picks a free port. */
  port?: number;
  /** Fixed token for tests; a fresh random one otherwise. */
  token?: string;
  /** Pushes a WebSocket may leave unread before it is cut off (MAX_BUFFERED_BYTES unless a test says). */
  maxBufferedBytes?: number;
  /** Request bodies held at once (MAX_IN_FLIGHT_BODY_BYTES unless a test says). */
  maxInFlightBodyBytes?: number;
}

export interface StudioServer {
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** A dropped run bundle is a whole run's log: `run.import` alone may send this much. */
const MAX_IMPORT_BYTES = 256 * 1024 * 1024;
const HOST = '127.0.0.1';
/** Unread pushes one WebSocket may hold in memory (a run's appended events, summaries) before it is cut off. */
const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;
/**
 * Request bodies held at once, from their first byte until their answer is sent: one largest
 * import and ordinary traffic beside it. Three 250 MB imports at once ran the studio out of heap
 * while parsing them; a body past this is refused (409, retryable) rather than read.
 */
const MAX_IN_FLIGHT_BODY_BYTES = MAX_IMPORT_BYTES + 32 * 1024 * 1024;

export async function startStudioServer(options: StudioServerOptions): Promise<StudioServer> {
  // The token guards a local server for one session; it is not engine state that a replay must
  // reproduce, so it comes straight from node:crypto rather than through Env.
  const token = options.token ?? crypto.randomBytes(24).toString('base64url');
  let port = 0;
  const sockets = new Set<WebSocket>();
  const maxBufferedBytes = options.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });

  const maxInFlightBodyBytes = options.maxInFlightBodyBytes ?? MAX_IN_FLIGHT_BODY_BYTES;
  let inFlightBodyBytes = 0;
  /**
   * Counts a body's bytes against maxInFlightBodyBytes (held until its answer is sent), or refuses
   * them, giving back what it held. Its whole declared length is taken at its first byte, so two
   * bodies that fit one at a time are not both refused half-read; bytes past it count as they come.
   */
  const holdBodyBytes = (held: { bytes: number; read: number; declared: number }, n: number) => {
    held.read += n;
    const more = Math.max(held.declared, held.read) - held.bytes;
    if (more > 0 && inFlightBodyBytes + more > maxInFlightBodyBytes) {
      inFlightBodyBytes -= held.bytes;
      held.bytes = 0;
      throw new StudioError('conflict', `the studio is reading or handling other large requests (${mb(inFlightBodyBytes)} of request bodies at once, ${mb(maxInFlightBodyBytes)} at most): send this one again when they are done`, true);
    }
    inFlightBodyBytes += more;
    held.bytes += more;
  };

  const allowedHosts = () => new Set([`${HOST}:${port}`, `localhost:${port}`]);
  const allowedOrigins = () => new Set([`http://${HOST}:${port}`, `http://localhost:${port}`]);
  const hostOk = (host: string | undefined) => host !== undefined && allowedHosts().has(host.toLowerCase());
  const originOk = (origin: string | undefined) => origin === undefined || allowedOrigins().has(origin.toLowerCase());
  const tokenOk = (given: string | null | undefined) => given !== null && given !== undefined && safeEqual(given, token);
  const cookieName = () => `reqon-studio-${port}`;
  /** By the explicit token, or by the session cookie on a request that says it comes from this page. */
  const authorized = (req: http.IncomingMessage, explicit: string | null | undefined) =>
    tokenOk(explicit) || (req.headers.origin !== undefined && tokenOk(cookieOf(req, cookieName())));

  const server = http.createServer((req, res) => {
    void handleRequest(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendJson(res, 500, toProtocolError(e));
      else res.destroy();
    });
  });

  async function handleRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    setCommonHeaders(res, port);
    if (!hostOk(req.headers.host)) return sendError(res, 421, 'bad-host', `this server answers only to ${HOST}:${port} and localhost:${port}`);
    if (!originOk(req.headers.origin)) return sendError(res, 403, 'bad-origin', 'cross-origin requests are refused');
    const url = new URL(req.url ?? '/', `http://${HOST}:${port}`);

    if (url.pathname.startsWith('/api/')) {
      if (req.method !== 'POST') {
        res.setHeader('allow', 'POST');
        return sendError(res, 405, 'bad-request', 'use POST for /api/<channel>');
      }
      if (!authorized(req, header(req, 'x-reqon-token'))) {
        return sendError(res, 401, 'unauthorized', 'no valid session token (the x-reqon-token header or the studio cookie); open the URL reqon studio printed');
      }
      const contentType = header(req, 'content-type') ?? '';
      if (!contentType.toLowerCase().startsWith('application/json')) {
        return sendError(res, 415, 'bad-request', 'send the request body as application/json');
      }
      const channel = url.pathname.slice('/api/'.length);
      if (!isRequestChannel(channel)) return sendError(res, 404, 'not-found', `unknown channel "${channel}"`);
      let body: unknown;
      const declared = Number(header(req, 'content-length'));
      const held = { bytes: 0, read: 0, declared: Number.isSafeInteger(declared) && declared > 0 ? declared : 0 };
      try {
        try {
          body = await readJson(req, channel === 'run.import' ? MAX_IMPORT_BYTES : MAX_BODY_BYTES, (n) => holdBodyBytes(held, n));
        } catch (e) {
          const error = toProtocolError(e);
          return sendJson(res, error.code === 'conflict' ? 409 : 400, error);
        }
        try {
          const result = await options.service.handle(channel as RequestChannel, body as never);
          return sendAnswer(res, channel, result);
        } catch (e) {
          const error = toProtocolError(e);
          return sendJson(res, httpStatusOf(error.code), error);
        }
      } finally {
        inFlightBodyBytes -= held.bytes;
      }
    }

    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return sendError(res, 405, 'bad-request', 'static files are read-only');
    }
    if (url.searchParams.has('token')) return exchangeToken(req, res, url);
    const file = resolveStatic(options.staticDir, url.pathname);
    if (file === null) {
      if (url.pathname === '/') return sendMissingBuild(res, options.staticDir);
      return sendError(res, 404, 'not-found', `no file ${url.pathname}`);
    }
    res.statusCode = 200;
    res.setHeader('content-type', file.contentType);
    res.setHeader('content-length', file.body.length);
    res.setHeader('cache-control', file.file.endsWith('index.html') ? 'no-store' : 'no-cache');
    res.end(req.method === 'HEAD' ? undefined : file.body);
  }

  /** The first load: the URL's token becomes the session cookie, and the address loses it. */
  function exchangeToken(req: http.IncomingMessage, res: http.ServerResponse, url: URL): void {
    if (!tokenOk(url.searchParams.get('token'))) {
      res.statusCode = 401;
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.setHeader('cache-control', 'no-store');
      res.end(
        `<!doctype html><meta charset="utf-8"><title>Reqon Studio</title>` +
          `<p>This link's session token is not this studio's (it was restarted, or the link was cut). Open the URL <code>reqon studio</code> printed last.</p>`,
      );
      return;
    }
    url.searchParams.delete('token');
    res.statusCode = 303;
    res.setHeader('set-cookie', `${cookieName()}=${token}; HttpOnly; SameSite=Strict; Path=/`);
    res.setHeader('cache-control', 'no-store');
    // No fragment: browsers never send one, and carry the page's over a redirect themselves.
    res.setHeader('location', `${url.pathname}${url.search}`);
    res.end(req.method === 'HEAD' ? undefined : '');
  }

  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // A socket that errors (reset, a malformed frame) is closed alone; the server goes on serving.
    socket.on('error', () => socket.destroy());
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (!hostOk(req.headers.host)) return refuse(421, 'Misdirected Request');
    if (!originOk(req.headers.origin)) return refuse(403, 'Forbidden');
    const url = new URL(req.url ?? '/', `http://${HOST}:${port}`);
    if (url.pathname !== '/ws') return refuse(404, 'Not Found');
    if (!authorized(req, url.searchParams.get('token'))) return refuse(401, 'Unauthorized');
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      // `ws` emits 'error' for a malformed frame (bad UTF-8, unmasked, unknown opcode, too big);
      // unheard, that error would kill the whole studio process.
      ws.on('error', () => ws.terminate());
      const unsubscribe = options.service.subscribe(<P extends PushChannel>(channel: P, payload: Pushes[P]) => {
        if (ws.readyState !== ws.OPEN) return;
        // A page that stops reading (a frozen tab, a paused script) would have every later push
        // kept for it in memory. Past the limit it is cut off: the page reconnects and reloads
        // what it shows, as after any lost connection (renderer/src/lib/studio-sync.ts).
        if (ws.bufferedAmount > maxBufferedBytes) return ws.terminate();
        ws.send(JSON.stringify({ channel, payload }));
      });
      ws.on('close', () => {
        sockets.delete(ws);
        unsubscribe();
      });
      // The socket is push-only; anything the page sends is ignored rather than interpreted.
      ws.on('message', () => undefined);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;

  return {
    url: `http://${HOST}:${port}/?token=${encodeURIComponent(token)}`,
    port,
    token,
    close: async () => {
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** One cookie's value from the Cookie header, or undefined. */
export function cookieOf(req: http.IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

function setCommonHeaders(res: http.ServerResponse, port: number): void {
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('content-security-policy', headerCsp(port));
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  writeJson(res, status, JSON.stringify(value ?? null));
}

function writeJson(res: http.ServerResponse, status: number, text: string): void {
  const body = Buffer.from(text);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.setHeader('content-length', body.length);
  res.end(body);
}

/**
 * A channel's answer; one past what a JSON text can hold (a page of events whose answers are tens
 * of megabytes each: V8's strings end near 512 MB) is a 400 saying to ask for less, not a 500.
 */
function sendAnswer(res: http.ServerResponse, channel: string, result: unknown): void {
  let text: string;
  try {
    text = JSON.stringify(result ?? null);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return sendError(res, 400, 'bad-request', `${channel}: the answer is too large to send as one JSON text; ask for a smaller page (a lower \`limit\`)`);
  }
  writeJson(res, 200, text);
}

function sendError(res: http.ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { code, message, retryable: false });
}

function sendMissingBuild(res: http.ServerResponse, dir: string): void {
  const text =
    `<!doctype html><meta charset="utf-8"><title>Reqon Studio</title>` +
    `<p>The studio's browser build was not found in <code>${escapeHtml(dir)}</code>. Run <code>npm run build:studio</code> and reload.</p>`;
  res.statusCode = 503;
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.end(text);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

/** The body as JSON, at most `limit` bytes; `hold` counts each chunk against the bytes the studio holds at once (and may refuse it). */
async function readJson(req: http.IncomingMessage, limit: number, hold: (bytes: number) => void): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  let refused: unknown;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new StudioError('bad-request', `request body larger than ${limit} bytes`);
    // A refused body is read to its end unkept, so that the client hears why instead of a reset.
    if (refused !== undefined) continue;
    try {
      hold((chunk as Buffer).length);
    } catch (e) {
      refused = e;
      chunks.length = 0;
      continue;
    }
    chunks.push(chunk as Buffer);
  }
  if (refused !== undefined) throw refused;
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new StudioError('bad-request', 'the request body is not valid JSON');
  }
}
