/**
 * The ONLY module that talks to the engine. In Electron it uses the preload's `window.reqon`;
 * in a browser it POSTs requests to `/api/<channel>` and listens for pushes on a WebSocket at
 * `/ws` that reconnects with backoff. Both authenticate by the HttpOnly session cookie the studio
 * server set when it exchanged the printed URL's `?token=` (studio-server.ts), so this page never
 * holds the token. Only a page served elsewhere (a Vite dev server with `?server=`) still gets one
 * in its URL: it is sent as a header, and dropped from the address bar at once. Every failure surfaces as a ProtocolFailure (a ProtocolError), and the
 * push connection's health is reported through `onStatus` so the store can show it.
 */
import type { Pushes, PushChannel, RequestChannel, Requests } from './protocol.js';
import { backoffDelay, type BackoffOptions, DEFAULT_BACKOFF } from './backoff.js';
import { toProtocolFailure, ProtocolFailure } from './protocol-failure.js';
import type { ConnectionStatus } from './connection-status.js';

export type { ConnectionStatus } from './connection-status.js';

/** What the Electron preload exposes (see electron/preload). */
export interface ReqonPreload {
  invoke(channel: string, req: unknown): Promise<unknown>;
  on(channel: string, cb: (payload: unknown) => void): (() => void) | void;
}

declare global {
  interface Window {
    reqon?: ReqonPreload;
  }
}


export type PushListener<P extends PushChannel> = (payload: Pushes[P]) => void;

export interface Bridge {
  invoke<C extends RequestChannel>(channel: C, req: Requests[C]['req']): Promise<Requests[C]['res']>;
  on<P extends PushChannel>(channel: P, cb: PushListener<P>): () => void;
  /** Stops reconnecting and closes the socket (tests, hot reload). */
  close(): void;
}

export interface HttpBridgeOptions {
  baseUrl: string;
  /** Only for a page not served by the studio itself; otherwise the session cookie authenticates. */
  token?: string;
  onStatus?: (status: ConnectionStatus) => void;
  backoff?: BackoffOptions;
}

type AnyListener = (payload: unknown) => void;

/** A push frame on the socket: `{ "channel": "runs.changed", "payload": {…} }`. */
function parseFrame(data: unknown): { channel: string; payload: unknown } | null {
  if (typeof data !== 'string') return null;
  try {
    const frame = JSON.parse(data) as Record<string, unknown>;
    const channel = frame.channel ?? frame.push ?? frame.type;
    if (typeof channel !== 'string') return null;
    return { channel, payload: 'payload' in frame ? frame.payload : frame.data };
  } catch {
    return null;
  }
}

export function createHttpBridge(options: HttpBridgeOptions): Bridge {
  const listeners = new Map<string, Set<AnyListener>>();
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const base = options.baseUrl.replace(/\/$/, '');
  let socket: WebSocket | null = null;
  let attempt = 0;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let closed = false;

  const report = (status: ConnectionStatus): void => options.onStatus?.(status);

  function connect(): void {
    if (closed) return;
    report({ state: 'connecting', attempt });
    const wsUrl = new URL(`${base}/ws`);
    wsUrl.protocol = wsUrl.protocol === 'https:' ? 'wss:' : 'ws:';
    if (options.token) wsUrl.searchParams.set('token', options.token);
    const ws = new WebSocket(wsUrl.toString());
    socket = ws;
    ws.onopen = () => {
      attempt = 0;
      report({ state: 'open', transport: 'websocket' });
    };
    ws.onmessage = (message) => {
      const frame = parseFrame(message.data);
      if (!frame) return;
      for (const cb of listeners.get(frame.channel) ?? []) cb(frame.payload);
    };
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = null;
      if (closed) return;
      const retryInMs = backoffDelay(attempt, backoff);
      attempt += 1;
      const closedStatus = { state: 'closed' as const, attempt, retryInMs, reason: event.reason || `socket closed (code ${event.code})` };
      report(closedStatus);
      retryTimer = setTimeout(connect, retryInMs);
      // A browser hides why a WebSocket handshake failed; a request tells a refused session
      // (401/403: a studio restarted with a new token, a cookie gone) from a server that is down.
      void whyRefused().then((refused) => {
        if (refused !== null && socket === null && !closed) report({ ...closedStatus, refused });
      });
    };
  }

  async function whyRefused(): Promise<string | null> {
    try {
      const response = await fetch(`${base}/api/studio.info`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(options.token ? { 'x-reqon-token': options.token } : {}) },
        credentials: 'same-origin',
        body: '{}',
      });
      if (response.status !== 401 && response.status !== 403) return null;
      const body = (await response.json().catch(() => null)) as { code?: unknown; message?: unknown } | null;
      const said = typeof body?.message === 'string' ? body.message : `HTTP ${response.status}`;
      return `${typeof body?.code === 'string' ? `${body.code}: ` : ''}${said}`;
    } catch {
      return null; // unreachable: the server is down, which the socket's close already says
    }
  }

  connect();

  return {
    async invoke(channel, req) {
      let response: Response;
      try {
        response = await fetch(`${base}/api/${channel}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(options.token ? { 'x-reqon-token': options.token } : {}) },
          credentials: 'same-origin',
          body: JSON.stringify(req ?? {}),
        });
      } catch (err) {
        throw new ProtocolFailure({
          code: 'E_UNREACHABLE',
          message: `The studio server did not answer '${channel}' (${err instanceof Error ? err.message : String(err)}). Is it still running?`,
          retryable: true,
        });
      }
      const text = await response.text();
      let body: unknown = null;
      if (text.length > 0) {
        try {
          body = JSON.parse(text);
        } catch {
          throw new ProtocolFailure({ code: 'E_BAD_RESPONSE', message: `'${channel}' answered ${response.status} with a body that is not JSON`, retryable: false });
        }
      }
      if (!response.ok) {
        throw toProtocolFailure(body ?? { code: `E_HTTP_${response.status}`, message: `'${channel}' failed with HTTP ${response.status}`, retryable: response.status >= 500 }, `E_HTTP_${response.status}`);
      }
      return body as Requests[typeof channel]['res'];
    },
    on(channel, cb) {
      let set = listeners.get(channel);
      if (!set) listeners.set(channel, (set = new Set()));
      const listener = cb as AnyListener;
      set.add(listener);
      return () => {
        set.delete(listener);
      };
    },
    close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      socket?.close();
      socket = null;
    },
  };
}

export function createElectronBridge(preload: ReqonPreload, onStatus?: (status: ConnectionStatus) => void): Bridge {
  onStatus?.({ state: 'open', transport: 'electron' });
  return {
    async invoke(channel, req) {
      try {
        return (await preload.invoke(channel, req)) as Requests[typeof channel]['res'];
      } catch (err) {
        throw toProtocolFailure(err, 'E_IPC');
      }
    },
    on(channel, cb) {
      const off = preload.on(channel, cb as AnyListener);
      return typeof off === 'function' ? off : () => undefined;
    },
    close() {},
  };
}

/** Electron's preload when present, else HTTP + WebSocket against the page's own origin. */
export function createBridge(onStatus?: (status: ConnectionStatus) => void): Bridge {
  if (typeof window !== 'undefined' && window.reqon) return createElectronBridge(window.reqon, onStatus);
  const params = new URLSearchParams(window.location.search);
  const token = params.get('token') ?? undefined;
  if (token !== undefined) {
    // Out of the address bar and history; the studio's own server never lets it get this far.
    params.delete('token');
    const search = params.toString();
    window.history.replaceState(window.history.state, '', `${window.location.pathname}${search ? `?${search}` : ''}${window.location.hash}`);
  }
  // `?server=` lets a Vite dev server point at a separately started studio server.
  const baseUrl = params.get('server') ?? window.location.origin;
  return createHttpBridge({ baseUrl, token, onStatus });
}

let current: Bridge | null = null;

export function setBridge(bridge: Bridge): void {
  current = bridge;
}

export function bridge(): Bridge {
  if (!current) throw new Error('The bridge is not started yet: call setBridge(createBridge(…)) in main.tsx first.');
  return current;
}

export function invoke<C extends RequestChannel>(channel: C, req: Requests[C]['req']): Promise<Requests[C]['res']> {
  return bridge().invoke(channel, req);
}

export function on<P extends PushChannel>(channel: P, cb: PushListener<P>): () => void {
  return bridge().on(channel, cb);
}
