/**
 * A real HTTP server on 127.0.0.1 for the HTTP layer's integration tests: a route function per
 * test, every request recorded (method, url, headers, body, socket), closed by the test.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  socket: Socket;
}

export type Route = (req: SeenRequest, res: ServerResponse) => void | Promise<void>;

export interface LocalServer {
  base: string;
  requests: SeenRequest[];
  route: Route;
  /** Distinct TCP connections seen so far. */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startServer(route: Route = (_req, res) => json(res, 404, { error: 'no route' })): Promise<LocalServer> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const requests: SeenRequest[] = [];
  const state = { route };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        socket: req.socket,
      };
      requests.push(seen);
      Promise.resolve(state.route(seen, res)).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
  });
  server.on('connection', (s: Socket) => {
    connections += 1;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    get route() {
      return state.route;
    },
    set route(r: Route) {
      state.route = r;
    },
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body === undefined ? '' : JSON.stringify(body));
}
