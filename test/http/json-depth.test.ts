/**
 * One depth limit where JSON enters a run (engine/env/json-input.ts): a response nested deeper
 * than MAX_JSON_DEPTH fails its fetch with a clear error instead of being stored and breaking
 * every reader later; the scan skips brackets inside strings and never recurses itself.
 */
import { describe, expect, it } from 'vitest';
import { createFakeEnv } from '../../engine/env/fake-env.js';
import { JsonDepthError, MAX_JSON_DEPTH, nestsDeeperThan, parseJsonInput } from '../../engine/env/json-input.js';
import { executeRequest } from '../../engine/http/client.js';
import { FetchError } from '../../engine/http/retry-policy.js';

const nested = (levels: number) => `${'{"a":['.repeat(levels)}1${']}'.repeat(levels)}`;

describe('nestsDeeperThan', () => {
  it('counts arrays and objects, not brackets inside strings or after escaped quotes', () => {
    expect(nestsDeeperThan('[[1]]', 2)).toBe(false);
    expect(nestsDeeperThan('[[[1]]]', 2)).toBe(true);
    expect(nestsDeeperThan(JSON.stringify({ s: '[[[[[[{{{{', t: 'a\\"[[[[[["' }), 1)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify(['\\', [[1]]]), 2)).toBe(true);
  });

  it('takes a million levels without a stack overflow', () => {
    expect(nestsDeeperThan('['.repeat(1_000_000))).toBe(true);
  });
});

describe('parseJsonInput', () => {
  it('parses up to the limit and refuses one level more', () => {
    const half = MAX_JSON_DEPTH / 2;
    expect(parseJsonInput(nested(half))).toBeTypeOf('object');
    expect(() => parseJsonInput(nested(half + 1))).toThrow(JsonDepthError);
    expect(() => parseJsonInput('{')).toThrow(SyntaxError);
  });
});

describe('a response nested too deep', () => {
  it('fails the fetch (not retried) and says why', async () => {
    const env = createFakeEnv({ autoAdvance: true, handler: () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: nested(1500) }) });
    const error = await executeRequest({ source: 'Api', method: 'GET', base: 'http://api.test', path: '/deep' }, { env }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).message).toContain(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    expect(env.http.requests).toHaveLength(1);
  });
});
