/**
 * `jump A then retry` is bounded as a bare `retry` is (3 attempts): a detour that does not change
 * the answer (a token refresh the API still refuses) fails the action instead of sending the same
 * requests for ever. A detour that does change it is taken, as often as an attempt needs it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';

const MISSION = `mission Guarded {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action Refresh {
    post "/token" { body: { grant: "again" } }
  }
  action Load {
    get "/items"
    match response {
      { error: _ } -> jump Refresh then retry,
      _ -> continue
    }
    for x in response.items { store x -> out { key: .id } }
  }
  run Load
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('jump … then retry', () => {
  it('fails the action after 3 attempts when each detour leaves the answer as it was', async () => {
    c = await openConformance();
    c.api.on('GET /items', { body: { error: 'token expired' } }).on('POST /token', { body: { token: 'still-bad' } });
    const result = await c.start(c.mission('guarded', MISSION));
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'retries-exhausted',
      message: 'Action Load exhausted 3 attempt(s) of `jump Refresh then retry`: it jumped again after each detour through Refresh',
    });
    expect(c.api.lines()).toEqual(['GET /items', 'POST /token', 'GET /items', 'POST /token', 'GET /items']);
    await c.expectVerified(result.runId);
  });

  it('retries after each detour that mends the answer', async () => {
    c = await openConformance();
    c.api.on('GET /items', [{ body: { error: 'token expired' } }, { body: { error: 'token expired' } }, { body: { items: [{ id: 'a' }] } }]).on('POST /token', { body: { token: 't' } });
    const result = await c.start(c.mission('guarded', MISSION));
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'out')).toEqual({ a: { id: 'a' } });
    await c.expectVerified(result.runId);
  });
});
