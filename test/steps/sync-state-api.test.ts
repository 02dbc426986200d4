/**
 * Whose checkpoints `sync_state` reads and advances (HttpRuntime.syncStateApi): the base URLs the
 * run's sources fetch from — the mission's, or those a --source points them at — so that a run
 * against a test server never moves what a run against the real APIs reads. Only a run against
 * the mission's own bases may read a checkpoint recorded before checkpoints named their API.
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
  it("are the mission's sources' base URLs with no override, or one that names a source's own base", () => {
    const own = { api: 'https://crm.example.com https://shop.example.com', readsUnnamed: true };
    expect(apiWith({})).toEqual(own);
    expect(apiWith({ Shop: 'https://shop.example.com/', Crm: 'https://crm.example.com' })).toEqual(own);
  });

  it("are the test server's once any source points away from its base, whichever and however many; they never read the unnamed ones", () => {
    expect(apiWith({ Shop: 'http://127.0.0.1:4010/' })).toEqual({ api: 'http://127.0.0.1:4010 https://crm.example.com', readsUnnamed: false });
    expect(apiWith({ Crm: 'http://127.0.0.1:4011', Shop: 'http://127.0.0.1:4010' })).toEqual({ api: 'http://127.0.0.1:4010 http://127.0.0.1:4011', readsUnnamed: false });
    expect(apiWith({ Crm: 'http://127.0.0.1:4010', Shop: 'http://127.0.0.1:4010' })).toEqual({ api: 'http://127.0.0.1:4010', readsUnnamed: false });
  });
});
