/**
 * assets/language/more-forms.vague runs against a FakeApi on 127.0.0.1: `paginate: { type: page,
 * …, sizeParam }` sends page and size, `paginate: { type: cursor, … }` follows `next`, object
 * patterns route each order (a nested pattern binds `c` and `why`, a literal needs equality, `_`
 * needs the key present and not null), and `[200, 204]` / `[404, 503]` arms take any of their
 * statuses — checked by the requests sent and what the stores hold, then verified.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';
import type { FakeReply } from '../support/fake-api.js';

const ENTRY = path.join(REPO, 'assets/language/more-forms.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
});

afterEach(async () => {
  await c.close();
});

function answer(health: FakeReply): void {
  c.api
    .on('GET /orders?p=1&per_page=2', { body: [
      { id: 'o1', status: 'paid', total: 250, currency: 'EUR' },
      { id: 'o2', status: 'failed', error: { code: 'card_declined', message: 'Declined' } },
    ] })
    .on('GET /orders?p=2&per_page=2', { body: [
      { id: 'o3', status: 'paid', total: 250, currency: 'USD' },
      { id: 'o4', status: 'cancelled', total: 10 },
    ] })
    .on('GET /orders?p=3&per_page=2', { body: [
      // `failed` without the nested error object: the first arm does not match, nor does `{ total: _ }` (null).
      { id: 'o5', status: 'failed', total: null },
    ] })
    .on('GET /events', { body: { items: [{ seq: 1 }, { seq: 2 }], next: 'c2' } })
    .on('GET /events?after=c2', { body: { items: [{ seq: 3 }], next: null } })
    .on('GET /health', health);
}

describe('more upstream forms, run', () => {
  it('paginates both object forms, routes by object patterns and takes a status from a list', async () => {
    answer({ status: 503, body: { state: 'maintenance' } });
    const result = await c.start(files(), { sources: { Shop: c.api.url } });
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(c.api.lines()).toEqual([
      'GET /orders?p=1&per_page=2',
      'GET /orders?p=2&per_page=2',
      'GET /orders?p=3&per_page=2',
      'GET /events',
      'GET /events?after=c2',
      'GET /health',
    ]);
    expect(await c.store(result.runId, 'orders')).toEqual({
      o1: { id: 'o1', size: 'big', total: 250 },
      // USD: the literal `currency: "EUR"` does not match, so the `{ total: _ }` arm takes it.
      o3: { id: 'o3', size: 'small', total: 250 },
    });
    expect(await c.store(result.runId, 'problems')).toEqual({
      o2: { id: 'o2', code: 'card_declined', why: 'Declined' },
      o5: { id: 'o5', why: 'no total' },
    });
    expect(Object.keys(await c.store(result.runId, 'events'))).toEqual(['1', '2', '3']);
    expect(await c.store(result.runId, 'health')).toEqual({ health: { id: 'health', up: false, status: 'maintenance' } });
    await c.expectVerified(result.runId);
  });

  it('a 204 takes the [200, 204] arm', async () => {
    answer({ status: 204, raw: '' });
    const result = await c.start(files(), { sources: { Shop: c.api.url } });
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(await c.store(result.runId, 'health')).toEqual({ health: { id: 'health', up: true } });
  });

  it('`abort "…" + m` fails the run with the message the bound name computes, and replays the same', async () => {
    const entry = path.join(c.dir, 'abort.vague');
    const text = [
      'mission AbortWith {',
      '  source Shop { auth: none, base: "https://shop.test" }',
      '  store seen: memory("seen")',
      '  action Pay {',
      '    post "/pay" { body: { amount: 5 }, allow: [402] }',
      '    match response {',
      '      { error: { message: m }, code: 402 } -> abort "payment refused: " + m,',
      '      _ -> { store { id: "paid" } -> seen }',
      '    }',
      '  }',
      '  run Pay',
      '}',
      '',
    ].join('\n');
    c.api.on('POST /pay', { status: 402, body: { error: { message: 'card expired' }, code: 402 } });
    const result = await c.start({ entry, files: [{ path: entry, text }] }, { sources: { Shop: c.api.url } });
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' ? [result.error.code, result.error.message] : []).toEqual(['aborted', 'payment refused: card expired']);
    expect(await c.store(result.runId, 'seen')).toEqual({});
    await c.expectVerified(result.runId);
  });
});
