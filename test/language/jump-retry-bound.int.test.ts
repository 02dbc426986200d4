/**
 * `jump A then retry` is bounded as a bare `retry` is (3 attempts): a detour that does not change
 * the answer (a token refresh the API still refuses) fails the action instead of sending the same
 * requests for ever. A detour that does change it is taken, as often as an attempt needs it.
 * Loops of jumps no attempt count sees — a jump back in the pipeline, detours that jump back to
 * each other or to themselves — fail the run once an action is to run MAX_ACTION_VISITS times.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_ACTION_VISITS } from '../../engine/executor/executor.js';
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

describe('loops of jumps', () => {
  const loops: Record<string, string> = {
    'a jump back in the pipeline': `action X { let n = 1 }\n  action Y { jump X }\n  run X then Y`,
    'two detours that jump back to each other': `action X { jump Y then retry }\n  action Y { jump X then retry }\n  run X`,
    'a detour to itself': `action X { jump X then continue }\n  run X`,
  };
  for (const [name, body] of Object.entries(loops)) {
    it(`fail the run, where they ran for ever: ${name}`, async () => {
      c = await openConformance();
      const result = await c.start(c.mission('loop', `mission Loop {\n  ${body}\n}\n`));
      expect(result.status).toBe('failed');
      expect(result.status === 'failed' && result.error).toMatchObject({ code: 'jump-loop' });
      expect(result.status === 'failed' && result.error.message).toMatch(new RegExp(`^Action X was to run for the ${MAX_ACTION_VISITS + 1}th time in this run: its jumps loop without end`));
    }, 120_000);
  }
});
