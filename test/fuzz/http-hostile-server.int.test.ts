/**
 * Property: whatever a hostile server does — any status, odd headers, truncated or oversized
 * bodies, invalid UTF-8, non-JSON, huge numbers, deep nesting, slow or endless streams, a reset
 * mid-body — one request through the real transport ends in exactly one outcome (a result or a
 * FetchError, never a hang, never another error), every attempt announced is reported once, and
 * no secret reaches anything the hooks record or the error says.
 *
 * Bounded (not done here): the same cases through the CLI with a crash at every point and a
 * resume; the transport and client are where the lies were, and this drives them directly.
 */
import fc from 'fast-check';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, SeededRandom } from '../../engine/env/fake-env.js';
import { UndiciTransport } from '../../engine/env/real-env.js';
import { AuthSession } from '../../engine/http/auth.js';
import { executeRequest, type AfterAttempt, type BeforeAttempt } from '../../engine/http/client.js';
import { FetchError } from '../../engine/http/retry-policy.js';
import { startServer, type LocalServer } from '../http/local-server.js';

const TOKEN = 'fuzz-secret-token-0123456789';
const LIMIT = 64 * 1024;

type Body =
  | { kind: 'json'; value: unknown }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: number[] }
  | { kind: 'deep'; levels: number }
  | { kind: 'huge-number' }
  | { kind: 'echo-token'; levels: number }
  | { kind: 'oversized' }
  | { kind: 'endless' }
  | { kind: 'truncated' }
  | { kind: 'reset-mid-body' }
  | { kind: 'stall' };

interface Case {
  status: number;
  headers: [string, string][];
  body: Body;
}

const bodyArb: fc.Arbitrary<Body> = fc.oneof(
  fc.record({ kind: fc.constant('json' as const), value: fc.jsonValue({ maxDepth: 4 }) }),
  fc.record({ kind: fc.constant('text' as const), text: fc.string({ maxLength: 200 }) }),
  fc.record({ kind: fc.constant('bytes' as const), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 200 }) }),
  fc.record({ kind: fc.constant('deep' as const), levels: fc.integer({ min: 100, max: 5000 }) }),
  fc.constant({ kind: 'huge-number' as const }),
  fc.record({ kind: fc.constant('echo-token' as const), levels: fc.integer({ min: 0, max: 400 }) }),
  fc.constant({ kind: 'oversized' as const }),
  fc.constant({ kind: 'endless' as const }),
  fc.constant({ kind: 'truncated' as const }),
  fc.constant({ kind: 'reset-mid-body' as const }),
  fc.constant({ kind: 'stall' as const }),
);

const headerArb = fc.tuple(
  fc.constantFrom('content-type', 'x-odd', 'retry-after', 'set-cookie', 'x-echo', 'content-encoding-x', '__proto__'),
  fc.oneof(fc.constantFrom('application/json', 'text/html', '999999999999', `Bearer ${TOKEN}`, ''), fc.string({ maxLength: 20 }).filter((s) => /^[\x20-\x7e]*$/.test(s))),
);

const caseArb: fc.Arbitrary<Case> = fc.record({
  status: fc.oneof(fc.constantFrom(200, 201, 204, 301, 400, 401, 404, 429, 500, 503), fc.integer({ min: 200, max: 599 })),
  headers: fc.array(headerArb, { maxLength: 4 }),
  body: bodyArb,
});

let current: Case | undefined;
let server: LocalServer;
const transport = new UndiciTransport();

function serve(c: Case, res: ServerResponse): void {
  const headers: Record<string, string> = {};
  for (const [k, v] of c.headers) if (k !== '__proto__') headers[k] = v;
  const b = c.body;
  const send = (data: string | Buffer) => {
    res.writeHead(c.status, headers);
    res.end(data);
  };
  switch (b.kind) {
    case 'json': return send(JSON.stringify(b.value) ?? 'null');
    case 'text': return send(b.text);
    case 'bytes': return send(Buffer.from(b.bytes));
    case 'deep': return send(`${'['.repeat(b.levels)}${']'.repeat(b.levels)}`);
    case 'huge-number': return send(`{"n": 1${'0'.repeat(400)}}`);
    case 'echo-token': return send(`${'{"d":'.repeat(b.levels)}"${TOKEN}"${'}'.repeat(b.levels)}`);
    case 'oversized': return send(Buffer.alloc(LIMIT * 2, 0x20));
    case 'endless': {
      // A few chunks per turn, never a tight loop: for a 204 or 304 `write` drops the bytes and
      // never pushes back, and the server shares this process's event loop.
      res.writeHead(c.status, headers);
      let sent = 0;
      const pump = (): void => {
        if (res.destroyed || sent > 4 * LIMIT) return void res.end();
        for (let i = 0; i < 4; i++) res.write(Buffer.alloc(16 * 1024, 0x31));
        sent += 4 * 16 * 1024;
        setImmediate(pump);
      };
      return pump();
    }
    case 'truncated':
      res.writeHead(c.status, { ...headers, 'content-length': '1000' });
      res.write('{"partial": ');
      setImmediate(() => res.socket?.destroy());
      return;
    case 'reset-mid-body':
      res.writeHead(c.status, headers);
      res.write('[1,2,');
      setImmediate(() => res.socket?.resetAndDestroy?.() ?? res.socket?.destroy());
      return;
    case 'stall':
      res.writeHead(c.status, headers);
      res.write('{');
      return; // never ends: the request's timeout must end it
  }
}

beforeAll(async () => {
  server = await startServer((_req, res) => serve(current!, res));
});
afterAll(async () => {
  await transport.close();
  await server.close();
});

describe('the HTTP layer against a hostile server', () => {
  it('ends every exchange in exactly one outcome and records no secret', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, fc.constantFrom('GET', 'POST'), async (c, method) => {
        current = c;
        const before: BeforeAttempt[] = [];
        const after: AfterAttempt[] = [];
        let outcome: 'result' | 'fetch-error';
        let error: unknown;
        try {
          await executeRequest(
            { source: 'Api', method, base: server.base, path: '/fuzz', maxResponseBytes: LIMIT, retry: { maxAttempts: 2, backoff: 'constant', initialDelay: 1, timeout: 300 }, ...(method === 'POST' ? { idempotencyKey: 'k-1', body: { a: 1 } } : {}) },
            { env: { clock: new FakeClock(0, { autoAdvance: true }), random: new SeededRandom(7), http: transport }, auth: new AuthSession('Api', { type: 'bearer', token: TOKEN }) },
            { beforeAttempt: (b) => void before.push(b), afterAttempt: (a) => void after.push(a) },
          );
          outcome = 'result';
        } catch (e) {
          error = e;
          outcome = 'fetch-error';
        }
        if (outcome === 'fetch-error') expect(error).toBeInstanceOf(FetchError);
        expect(after.map((a) => a.attempt)).toEqual(before.map((b) => b.attempt));
        const last = after[after.length - 1]!;
        expect(['success', 'allowed', 'fail']).toContain(last.verdict);
        expect(outcome === 'result').toBe(last.verdict === 'success' || last.verdict === 'allowed');
        const recorded = JSON.stringify([before, after, error instanceof Error ? error.message : '']);
        expect(recorded).not.toContain(TOKEN);
      }),
      { numRuns: 120, seed: 1313 },
    );
  });
});
