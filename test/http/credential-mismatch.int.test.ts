/**
 * Credentials a source cannot use are the run's setup, not an item's data: credentials of another
 * type than the source declares (REQON_<SOURCE>_TOKEN for `auth: api_key`), or an auth file entry
 * for a source of `auth: none`, refuse the run before it starts — no request leaves, no run row.
 * They failed every request instead, and in a loop each item was a tolerated failure: the run
 * "completed", exit 0. Met later (the environment changed before a resume), they end the loop and
 * fail the run rather than being tolerated item by item.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CredentialsError } from '../../engine/http/credentials.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

let c: Conformance;
let vars: Record<string, string>;

beforeEach(async () => {
  vars = {};
  // The run reads the variables as they are when it reads them: a resume sees the changed ones.
  c = await openConformance({ env: (real) => ({ ...real, vars: new Proxy({}, { get: (_, name) => vars[String(name)], has: (_, name) => String(name) in vars, ownKeys: () => Object.keys(vars), getOwnPropertyDescriptor: (_, name) => (String(name) in vars ? { value: vars[String(name)], enumerable: true, configurable: true } : undefined) }) }) });
  c.api.on('POST /check', { body: { ok: true } });
});

afterEach(async () => {
  await c.close();
});

const MISSION = `mission Fraud {
  source Fraud { auth: api_key, base: "http://127.0.0.1:9" }
  store checked: memory("checked")
  action Check {
    for p in [{ id: "p1" }, { id: "p2" }, { id: "p3" }] {
      post "/check" { body: { payment_id: p.id } }
      store { id: p.id, ok: response.ok } -> checked { key: .id }
      pause { duration: "1ms" }
    }
  }
  run Check
}
`;

async function refusal(start: Promise<unknown>): Promise<unknown> {
  return start.then(() => undefined, (error: unknown) => error);
}

describe('credentials a source cannot use', () => {
  it('of another type than it declares refuse the run before it starts', async () => {
    vars['REQON_FRAUD_TOKEN'] = 'fraudtoken123';
    const error = await refusal(c.start(c.mission('fraud', MISSION), { sources: { Fraud: c.api.url } }));
    expect(error).toBeInstanceOf(CredentialsError);
    expect((error as Error).message).toBe('source "Fraud" declares auth: api_key but the REQON_FRAUD_* environment variables give credentials of type bearer; make them agree');
    expect(c.api.lines()).toEqual([]);
    expect(await c.log.listRuns({})).toEqual([]);
  });

  it('an auth file entry for a source of `auth: none` refuses the run', async () => {
    const authFile = path.join(c.dir, 'auth.json');
    fs.writeFileSync(authFile, JSON.stringify({ Open: { type: 'bearer', token: 'abcdefghijkl' } }));
    const text = MISSION.replace('source Fraud { auth: api_key, base: "http://127.0.0.1:9" }', 'source Fraud { auth: api_key, base: "http://127.0.0.1:9" }\n  source Open { auth: none, base: "http://127.0.0.1:9" }');
    vars['REQON_FRAUD_API_KEY'] = 'fraudkey123456';
    const error = await refusal(c.start(c.mission('fraud', text), { sources: { Fraud: c.api.url }, authFile }));
    expect(error).toBeInstanceOf(CredentialsError);
    expect((error as Error).message).toMatch(/^source "Open" declares auth: none but .*auth\.json has credentials for it/);
    expect(c.api.lines()).toEqual([]);
  });

  it('met after a resume, they fail the run instead of being tolerated item by item', async () => {
    vars['REQON_FRAUD_API_KEY'] = 'fraudkey123456';
    const first = await c.start(c.mission('fraud', MISSION), { sources: { Fraud: c.api.url } });
    expect(first.status).toBe('suspended');
    expect(c.api.lines()).toEqual(['POST /check']);
    delete vars['REQON_FRAUD_API_KEY'];
    vars['REQON_FRAUD_TOKEN'] = 'fraudtoken123';
    await new Promise((r) => setTimeout(r, 5));
    const resumed = await c.resume(first.runId, {});
    expect(resumed.status).toBe('failed');
    expect(resumed.status === 'failed' ? resumed.error.message : '').toMatch(/declares auth: api_key but the REQON_FRAUD_\* environment variables give credentials of type bearer/);
    expect(resumed.status === 'failed' ? resumed.tolerated ?? [] : ['?']).toEqual([]);
    expect(c.api.lines()).toEqual(['POST /check']);
  });
});
