#!/usr/bin/env node
/**
 * The demo API for Reqon Studio's restart-survival demo: a real HTTP server on 127.0.0.1.
 *
 *   GET  /orders?page=N     7 orders, 3 per page (page 1, 2, 3)
 *   POST /confirmations     confirms one order; honours `Idempotency-Key`: the first request with a
 *                           key applies the effect and stores its response, every later request with
 *                           the same key gets that stored response back and applies nothing
 *   GET  /summary           a deterministic summary of the orders
 *   GET  /__stats           counters: { requests, effects, keys: { [key]: { requests, effects } } }
 *   POST /__reset           forget keys and counters
 *
 * It counts requests and effects per idempotency key, which is how the crash lab proves that every
 * effect happened exactly once although the run was killed and restarted in between.
 * Plain ESM JavaScript, no build: `node assets/demo/demo-api.mjs [--port N]` prints its URL.
 */
import http from 'node:http';
import { pathToFileURL } from 'node:url';

const ORDERS = [
  { id: 'o-1001', customer: 'Ada Lovelace', amount: 12900, items: 3 },
  { id: 'o-1002', customer: 'Grace Hopper', amount: 4550, items: 1 },
  { id: 'o-1003', customer: 'Alan Turing', amount: 89900, items: 7 },
  { id: 'o-1004', customer: 'Katherine Johnson', amount: 2300, items: 2 },
  { id: 'o-1005', customer: 'Edsger Dijkstra', amount: 15075, items: 4 },
  { id: 'o-1006', customer: 'Barbara Liskov', amount: 6400, items: 1 },
  { id: 'o-1007', customer: 'Donald Knuth', amount: 31415, items: 9 },
];
const PAGE_SIZE = 3;

/**
 * `latencyMs` delays every answer but the `/__` ones, so a demo run lasts long enough to watch
 * (`reqon studio --demo`); 0 (the default) answers at once, as the tests want.
 * @param {{ port?: number, latencyMs?: number }} [options]
 * @returns {Promise<{ url: string, port: number, stats: () => object, reset: () => void, close: () => Promise<void> }>}
 */
export async function startDemoApi(options = {}) {
  /** @type {Map<string, { status: number, body: object }>} */
  const responses = new Map();
  /** @type {Map<string, { requests: number, effects: number }>} */
  const keys = new Map();
  let requests = 0;
  let effects = 0;
  let confirmations = 0;

  const stats = () => ({
    requests,
    effects,
    confirmations,
    keys: Object.fromEntries([...keys.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  });
  const reset = () => {
    responses.clear();
    keys.clear();
    requests = 0;
    effects = 0;
    confirmations = 0;
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      body += chunk;
      if (body.length > 1_000_000) req.destroy();
    });
    req.on('end', () => {
      const delay = url.pathname.startsWith('/__') ? 0 : (options.latencyMs ?? 0);
      const send = (status, value) => {
        const text = JSON.stringify(value);
        const answer = () => {
          if (res.destroyed) return;
          res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
          res.end(text);
        };
        if (delay > 0) setTimeout(answer, delay).unref();
        else answer();
      };
      if (url.pathname === '/__stats' && req.method === 'GET') return send(200, stats());
      if (url.pathname === '/__reset' && req.method === 'POST') {
        reset();
        return send(200, { ok: true });
      }
      requests += 1;
      if (url.pathname === '/orders' && req.method === 'GET') {
        const page = Number(url.searchParams.get('page') ?? '1');
        if (!Number.isInteger(page) || page < 1) return send(400, { error: 'page must be an integer >= 1' });
        const start = (page - 1) * PAGE_SIZE;
        return send(200, { orders: ORDERS.slice(start, start + PAGE_SIZE), page, pageSize: PAGE_SIZE, total: ORDERS.length });
      }
      if (url.pathname === '/summary' && req.method === 'GET') {
        const amount = ORDERS.reduce((sum, o) => sum + o.amount, 0);
        return send(200, { id: 'all', orders: ORDERS.length, amount });
      }
      if (url.pathname === '/confirmations' && req.method === 'POST') {
        let parsed;
        try {
          parsed = body === '' ? {} : JSON.parse(body);
        } catch {
          return send(400, { error: 'body must be JSON' });
        }
        if (typeof parsed?.orderId !== 'string') return send(422, { error: 'orderId (string) is required' });
        const key = req.headers['idempotency-key'];
        const keyText = Array.isArray(key) ? key[0] : key;
        if (keyText !== undefined) {
          const counter = keys.get(keyText) ?? { requests: 0, effects: 0 };
          counter.requests += 1;
          keys.set(keyText, counter);
          const stored = responses.get(keyText);
          if (stored !== undefined) return send(stored.status, stored.body);
          counter.effects += 1;
        }
        effects += 1;
        confirmations += 1;
        // The confirmation id depends on the order only, so a crash-free run and a crashed one
        // store the same thing; `confirmedAt` echoes the mission's recorded `now()`.
        const response = { orderId: parsed.orderId, confirmationId: `conf-${parsed.orderId}`, status: 'confirmed', confirmedAt: parsed.confirmedAt ?? null };
        if (keyText !== undefined) responses.set(keyText, { status: 201, body: response });
        return send(201, response);
      }
      return send(404, { error: `no route ${req.method} ${url.pathname}` });
    });
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve(undefined));
  });
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    stats,
    reset,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const flag = process.argv.indexOf('--port');
  const port = flag === -1 ? 0 : Number(process.argv[flag + 1]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write('demo-api: --port must be an integer between 0 and 65535\n');
    process.exit(2);
  }
  const api = await startDemoApi({ port });
  process.stdout.write(`demo-api ${api.url}\n`);
  const stop = () => void api.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
