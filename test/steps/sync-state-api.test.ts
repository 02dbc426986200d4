/**
 * Whose checkpoints `sync_state` reads and advances (HttpRuntime.syncStateApi): the mission's own
 * (none named) unless a --source points a source away from its base — then the URLs it points to
 * (without their query), so that a run against a test server never moves what a run against the
 * real APIs reads.
 */
import { describe, expect, it } from 'vitest';
import { createFakeEnv } from '../../engine/env/fake-env.js';
import { modelFor } from '../../engine/executor/run-mission.js';
import { HttpRuntime } from '../../engine/steps/http-runtime.js';

const entry = '/virtual/sync-state-api.vague';
const model = modelFor({
  entry,
  files: [
    {
      path: entry,
      text: `mission M {
  source Shop { auth: none, base: "https://shop.example.com" }
  source Crm { auth: none, base: "https://crm.example.com/" }
  action A { store { "k": now() } -> sync_state { key: "k" } }
  run A
}
`,
    },
  ],
});
const apiWith = (sources: Record<string, string>) => new HttpRuntime(model, createFakeEnv(), { sources, progress: () => {} }).syncStateApi();

describe('sync_state checkpoints under --source', () => {
  it("are the mission's own (none named) with no override, or one that names a source's own base", () => {
    expect(apiWith({})).toEqual({ readsUnnamed: true });
    expect(apiWith({ Shop: 'https://shop.example.com/', Crm: 'https://crm.example.com' })).toEqual({ readsUnnamed: true });
  });

  it("are the test server's once any source points away from its base, whichever and however many; never its query", () => {
    expect(apiWith({ Shop: 'http://127.0.0.1:4010/' })).toEqual({ api: 'http://127.0.0.1:4010', readsUnnamed: false });
    expect(apiWith({ Crm: 'http://127.0.0.1:4011', Shop: 'http://127.0.0.1:4010?code=rotating-key' })).toEqual({ api: 'http://127.0.0.1:4010 http://127.0.0.1:4011', readsUnnamed: false });
    expect(apiWith({ Crm: 'http://127.0.0.1:4010', Shop: 'http://127.0.0.1:4010' })).toEqual({ api: 'http://127.0.0.1:4010', readsUnnamed: false });
  });
});
