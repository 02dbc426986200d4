/**
 * A slow API for runs that must still be executing when a spec kills them: `GET /items` lists
 * `count` items and each `POST /marks` takes `delayMs` to answer. Writes are counted per
 * Idempotency-Key (`applied`), so a spec can check that a run killed and taken over applied each
 * write once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlowApi {
  url: string;
  applied: Map<string, number>;
  close(): Promise<void>;
}

export async function startSlowApi(count = 16, delayMs = 250): Promise<SlowApi> {
  const applied = new Map<string, number>();
  const seen = new Map<string, unknown>();
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'GET' && req.url?.startsWith('/items')) return send(200, Array.from({ length: count }, (_, i) => ({ id: `i-${i + 1}` })));
      if (req.method === 'POST' && req.url?.startsWith('/marks')) {
        const header = req.headers['idempotency-key'];
        const key = Array.isArray(header) ? header[0] : header;
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (key !== undefined && seen.has(key)) return send(201, seen.get(key));
          const answer = { mark: applied.size + 1 };
          if (key !== undefined) {
            applied.set(key, (applied.get(key) ?? 0) + 1);
            seen.set(key, answer);
          }
          send(201, answer);
        }, delayMs);
        timers.add(timer);
        return;
      }
      send(404, { error: 'no route' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    applied,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A mission for it: one slow POST per item, each answer stored. */
export const MARKS_MISSION = `mission Marks {
  source Slow { auth: none, base: "http://127.0.0.1:9" }
  store marks: sql("marks")
  action Mark {
    get "/items"
    for item in response {
      post "/marks" { body: { item: item.id } }
      store { id: item.id, mark: response.mark } -> marks { key: .id }
    }
  }
  run Mark
}
`;
