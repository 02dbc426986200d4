/**
 * assets/language/source-selection.vague against a FakeApi on 127.0.0.1, each source pointed at
 * its own path prefix: `get "/x" from S { … }`, `get "/x" from S`, `source: "S"` (quoted) and
 * `get S "/x"` send to S as `source: S` does (issue 15; docs/language.md).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/source-selection.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /billing/invoices?page=1', { body: [{ id: 1 }, { id: 2 }] });
  c.api.on('GET /billing/invoices?page=2', { body: [] });
  c.api.on('GET /billing/invoices', { body: [{ id: 3 }] });
  c.api.on('GET /accounts/users', { body: [{ id: 4 }] });
});

afterEach(async () => {
  await c.close();
});

describe('naming a request source', () => {
  it('sends each request to the source named by from, a quoted source: or a name before the path', async () => {
    const sources = { Billing: `${c.api.url}/billing`, Accounts: `${c.api.url}/accounts` };
    const result = await c.start(files(), { sources });
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(c.api.lines()).toEqual([
      'GET /billing/invoices?page=1',
      'GET /billing/invoices?page=2',
      'GET /billing/invoices',
      'GET /accounts/users',
      'GET /accounts/users',
    ]);
    expect(Object.keys(await c.store(result.runId, 'seen')).sort()).toEqual(
      ['from-1', 'from-2', 'from-bare-3', 'named-4', 'quoted-4'],
    );
    await c.expectVerified(result.runId);
  });
});
