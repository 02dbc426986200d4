/**
 * The bench's API, run as its own process by engine-fixtures.ts `startBenchServer`:
 * `node bench-server.js TOTAL PAGE_SIZE` listens on 127.0.0.1 (a free port), prints
 * `listening PORT`, and serves until SIGTERM:
 * - `POST /things` → 201 `{ok: true}`, counting POSTs and distinct Idempotency-Keys;
 * - `GET /records?offset=N` → the page of PAGE_SIZE records starting at N of a deterministic list
 *   of TOTAL records (an empty page past the end); it keeps no record of GETs, so it can serve a
 *   million records without growing; `GET /from/START/records?offset=N` is the same list from
 *   record START on (a sync of its tail alone);
 * - `GET /stats` → `{posts, keys}`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const [totalText, pageText] = process.argv.slice(2);
const total = Number(totalText);
const pageSize = Number(pageText);
if (!Number.isInteger(total) || !Number.isInteger(pageSize) || pageSize <= 0) {
  process.stderr.write('usage: bench-server.js TOTAL PAGE_SIZE\n');
  process.exit(2);
}

let posts = 0;
const keys = new Set<string>();

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (req.method === 'POST') {
    req.resume();
    req.on('end', () => {
      posts++;
      const key = req.headers['idempotency-key'];
      if (typeof key === 'string') keys.add(key);
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    return;
  }
  const records = /^(?:\/from\/(\d+))?\/records$/.exec(url.pathname);
  if (req.method === 'GET' && records) {
    const offset = Number(records[1] ?? '0') + Number(url.searchParams.get('offset') ?? '0');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(recordsPage(offset, Math.max(0, Math.min(pageSize, total - offset))));
    return;
  }
  if (req.method === 'GET' && url.pathname === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ posts, keys: keys.size }));
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end('{"error":"not found"}');
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});

function recordsPage(offset: number, count: number): string {
  const parts: string[] = [];
  for (let i = offset; i < offset + count; i++) {
    parts.push(`{"id":${i},"name":"record ${i}","price":${i % 997},"active":${i % 3 === 0}}`);
  }
  return `[${parts.join(',')}]`;
}
