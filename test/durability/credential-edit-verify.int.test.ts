/**
 * Which credential a request carries is no part of its identity (a rotated token replays alike),
 * so an edit that makes requests carry another — a header, a query parameter or a body field
 * reading another variable, or a secret typed in — cannot be compared: verify says so, "not
 * checked", and never passes it as a match (helper 96: each verified, exit 0). An edit that keeps
 * the credentials the mission reads still verifies in full (the contrast), and so does an
 * unchanged run where its credentials are not set (they were replayed with stand-ins) — where
 * they go only where credentials go; read elsewhere, what they computed is said not checked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const VARS = { REQON_A_TOKEN: 'aaaa-token-1111', REQON_B_TOKEN: 'bbbb-token-2222', REQON_A_KEY: 'key-aaaa-1111', REQON_B_KEY: 'key-bbbb-2222' };

const mission = (o: { header?: string; key?: string; body?: string; note?: string } = {}) => `mission Creds {
  source Api { auth: none, base: "http://127.0.0.1:1", headers: { "X-Api-Token": ${o.header ?? '"${REQON_A_TOKEN}"'} } }
  action A {
    get "/orders" { params: { api_key: env("${o.key ?? 'REQON_A_KEY'}") } }
    post "/p" { body: { x: 1, t: env("${o.body ?? 'REQON_A_TOKEN'}")${o.note ?? ''} } }
  }
  run A
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe.each(backends)('%s: an edit that makes requests carry another credential', (backend) => {
  const edits: [string, Parameters<typeof mission>[0]][] = [
    ['a header reading another variable', { header: '"${REQON_B_TOKEN}"' }],
    ['a query parameter reading another variable', { key: 'REQON_B_KEY' }],
    ['a body field reading another variable', { body: 'REQON_B_TOKEN' }],
    ["another variable's secret typed into the header", { header: '"bbbb-token-2222"' }],
  ];
  it.each(edits)('%s: not checked, said so, never a full match', async (_, edit) => {
    c = await openConformance({ backend, vars: VARS });
    c.api.on('GET /orders?*', { body: [] }).on('POST /p', { status: 201, body: { ok: true } });
    const run = await c.start(c.mission('creds', mission()));
    expect(run.status).toBe('completed');
    expect(fullyVerified(await verifyRun(c.log, run.runId, { env: c.env }))).toBe(true);
    const report = await verifyRun(c.log, run.runId, { env: c.env, missionFiles: c.mission('edited', mission(edit)) });
    expect(report.divergence).toBeNull();
    expect(fullyVerified(report)).toBe(false);
    expect(report.unchecked.join('\n')).toMatch(/the credentials the mission reads \(\[REQON_A_KEY, REQON_A_TOKEN\] → \[.+\](, and a credential typed into the mission)?\): which credential a request carries is no part of its identity/);
    // Never the secret itself, nor a digest of it.
    expect(JSON.stringify(report)).not.toContain('bbbb-token-2222');
    expect(JSON.stringify(report)).not.toMatch(/sha256/);
  });

  it('an unchanged run verifies in full where its credentials are not set (another machine, an imported bundle), if they go only where credentials go', async () => {
    c = await openConformance({ backend, vars: VARS });
    c.api.on('GET /orders?*', { body: [] }).on('POST /p', { status: 201, body: { ok: true } });
    // The header and the query parameter only: the body reads no credential.
    const headerAndQuery = mission().replace('t: env("REQON_A_TOKEN")', 't: "plain"');
    const run = await c.start(c.mission('creds', headerAndQuery));
    // Before, the header's request failed to build there, and the run verified as DIVERGED (helper 96).
    const elsewhere = await verifyRun(c.log, run.runId, { env: { ...c.env, vars: {} } });
    expect(elsewhere.divergence).toBeNull();
    expect(fullyVerified(elsewhere)).toBe(true);
    // An edit that reads another credential is still not checked there.
    const edited = await verifyRun(c.log, run.runId, { env: { ...c.env, vars: {} }, missionFiles: c.mission('edited', headerAndQuery.replace('REQON_A_KEY', 'REQON_B_KEY')) });
    expect(fullyVerified(edited)).toBe(false);
  });

  it('a credential read elsewhere (a body field) and not set where verify runs: what it computed is said not checked, never ✓', async () => {
    c = await openConformance({ backend, vars: VARS });
    c.api.on('GET /orders?*', { body: [] }).on('POST /p', { status: 201, body: { ok: true } });
    const run = await c.start(c.mission('creds', mission()));
    const elsewhere = await verifyRun(c.log, run.runId, { env: { ...c.env, vars: {} } });
    expect(elsewhere.divergence).toBeNull();
    expect(fullyVerified(elsewhere)).toBe(false);
    expect(elsewhere.unchecked).toContainEqual(expect.stringMatching(/^what the mission computes from REQON_A_TOKEN outside a credential header or query parameter .+ replayed with a stand-in/));
    // Where it is set, the same run verifies in full.
    expect(fullyVerified(await verifyRun(c.log, run.runId, { env: c.env }))).toBe(true);
  });

  it('a run that failed for want of a credential verifies as it ran where the credential is still unset (no stand-in for what the run did not have)', async () => {
    c = await openConformance({ backend, vars: { REQON_A_KEY: VARS.REQON_A_KEY } });
    const run = await c.start(c.mission('creds', mission()));
    expect(run.status).toBe('failed');
    const report = await verifyRun(c.log, run.runId, { env: c.env });
    expect(report.divergence).toBeNull();
    expect(fullyVerified(report)).toBe(true);
  });

  it('a step that uses a credential\'s value diverges where it is not set, and the explanation says the replay read a stand-in', async () => {
    c = await openConformance({ backend, vars: VARS });
    c.api.on('GET /orders?*', { body: [] }).on('POST /p', { status: 201, body: { ok: true } });
    const uses = mission().replace('  run A', '  store s: memory("s")\n  action B {\n    store { id: "k", live: startsWith(env("REQON_A_TOKEN"), "aaaa") } -> s { key: .id }\n  }\n  run A then B');
    const run = await c.start(c.mission('uses', uses));
    expect(run.status).toBe('completed');
    const elsewhere = await verifyRun(c.log, run.runId, { env: { ...c.env, vars: {} } });
    expect(elsewhere.divergence).not.toBeNull();
    expect(elsewhere.divergence!.explanation).toMatch(/The replay read stand-ins for (.+, )?REQON_A_TOKEN(, .+)?, not set where verify runs/);
  });

  it('an edit that keeps the credentials it reads still verifies in full', async () => {
    c = await openConformance({ backend, vars: VARS });
    c.api.on('GET /orders?*', { body: [] }).on('POST /p', { status: 201, body: { ok: true } });
    const run = await c.start(c.mission('creds', mission()));
    // The same mission with a comment and its lines laid out otherwise.
    const same = `// the same requests\n${mission().replace('run A', '\n  run A')}`;
    expect(fullyVerified(await verifyRun(c.log, run.runId, { env: c.env, missionFiles: c.mission('same', same) }))).toBe(true);
  });
});
