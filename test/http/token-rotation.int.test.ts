/**
 * A provider that rotates refresh tokens (each may be used once; the access token it goes with
 * is the only one accepted) across runs: the refreshed tokens are written back to the --auth file
 * they came from, so the next run — or two runs refreshing at once — presents the newest refresh
 * token. Kept out of the log. A field the file takes from a variable, and credentials from
 * REQON_* variables, cannot be kept: the run says so.
 */
import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openConformance, writeAuthFile, type Conformance } from '../conformance/harness.js';

const MISSION = `mission Ledger {
  source Api { auth: oauth2, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/invoices"
    for x in response.items { store x -> out { key: .id } }
  }
  run A
}
`;

/** The provider's state: the one valid access token, the one valid refresh token, refusals seen. */
function rotatingProvider(c: Conformance) {
  const state = { access: 'access-0-xxxxxxxx', refresh: 'refresh-0-xxxxxxxx', issued: 0, refused: 0 };
  c.api
    .on('POST /oauth/token', (req) => {
      const form = new URLSearchParams(String(req.body ?? ''));
      if (form.get('refresh_token') !== state.refresh) {
        state.refused++;
        return { status: 400, body: { error: 'invalid_grant' } };
      }
      state.issued++;
      state.access = `access-${state.issued}-$xxxxxxx`;
      state.refresh = `refresh-${state.issued}-xxxxxxxx`;
      return { body: { access_token: state.access, refresh_token: state.refresh, token_type: 'Bearer' } };
    })
    .on('GET /invoices', (req) => (req.headers.authorization === `Bearer ${state.access}` ? { body: { items: [{ id: 'inv-1' }] } } : { status: 401, body: { error: 'expired' } }));
  return state;
}

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('rotated oauth2 tokens', () => {
  it('are written back to the --auth file, so the next run refreshes with the newest one', async () => {
    c = await openConformance();
    const provider = rotatingProvider(c);
    const authFile = writeAuthFile(c.dir, {
      Api: { type: 'oauth2', accessToken: 'stale-access-xxxxxxxx', refreshToken: 'refresh-0-xxxxxxxx', tokenEndpoint: `${c.api.url}/oauth/token` },
      stores: { unrelated: { url: 'http://127.0.0.1:9' } },
    });
    fs.chmodSync(authFile, 0o600);
    const files = c.mission('ledger', MISSION);
    for (let run = 1; run <= 3; run++) {
      const result = await c.start(files, { authFile });
      expect(result.status, `run ${run}`).toBe('completed');
      // Each run finds the last run's access token valid: expire it, so the next must refresh.
      provider.access = `revoked-${run}`;
    }
    expect(provider).toMatchObject({ issued: 3, refused: 0 });
    const kept = JSON.parse(fs.readFileSync(authFile, 'utf8'));
    // A `$` of the token's own is written as `$$` (the file is interpolated when read).
    expect(kept.Api).toEqual({ type: 'oauth2', accessToken: 'access-3-$$xxxxxxx', refreshToken: 'refresh-3-xxxxxxxx', tokenEndpoint: `${c.api.url}/oauth/token` });
    expect(kept.stores).toEqual({ unrelated: { url: 'http://127.0.0.1:9' } });
    expect(fs.statSync(authFile).mode & 0o777).toBe(0o600);
    // Nothing of the tokens reached the log.
    const log = JSON.stringify(await Promise.all((await c.log.listRuns()).map((r) => c!.log.read(r.runId))));
    expect(log).not.toMatch(/(access|refresh)-\d/);
  });

  it('of two runs refreshing at once, the second takes the tokens the first kept instead of revoking them', async () => {
    c = await openConformance();
    const provider = rotatingProvider(c);
    const authFile = writeAuthFile(c.dir, { Api: { type: 'oauth2', accessToken: 'stale-access-xxxxxxxx', refreshToken: 'refresh-0-xxxxxxxx', tokenEndpoint: `${c.api.url}/oauth/token` } });
    const files = c.mission('ledger', MISSION);
    const results = await Promise.all([c.start(files, { authFile }), c.start(files, { authFile })]);
    // A second exchange would revoke the access token the first run was just given (this provider accepts the last only).
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(provider).toMatchObject({ issued: 1, refused: 0 });
    expect(JSON.parse(fs.readFileSync(authFile, 'utf8')).Api.refreshToken).toBe(provider.refresh);
  });

  it('takes tokens another run kept, and exchanges its own when they are stale too', async () => {
    c = await openConformance();
    const provider = rotatingProvider(c);
    const endpoint = `${c.api.url}/oauth/token`;
    const authFile = writeAuthFile(c.dir, { Api: { type: 'oauth2', accessToken: 'access-0-xxxxxxxx', refreshToken: 'refresh-0-xxxxxxxx', tokenEndpoint: endpoint } });
    const served = c.api;
    let first = true;
    served.on('GET /invoices', (req) => {
      if (first) {
        // Meanwhile another run refreshed (refresh-0 → refresh-1) and kept its tokens, whose access token has since expired.
        first = false;
        provider.issued = 1;
        provider.refresh = 'refresh-1-xxxxxxxx';
        provider.access = 'access-2-never-issued';
        fs.writeFileSync(authFile, JSON.stringify({ Api: { type: 'oauth2', accessToken: 'access-1-xxxxxxxx', refreshToken: 'refresh-1-xxxxxxxx', tokenEndpoint: endpoint } }));
        return { status: 401, body: { error: 'expired' } };
      }
      return req.headers.authorization === `Bearer ${provider.access}` ? { body: { items: [{ id: 'inv-1' }] } } : { status: 401, body: { error: 'expired' } };
    });
    const result = await c.start(c.mission('ledger', MISSION), { authFile });
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    // Its own token (401), the kept one (401, no exchange), then an exchange of the kept refresh token.
    expect(c.api.requests.filter((r) => r.url === '/invoices').map((r) => r.headers.authorization)).toEqual([
      'Bearer access-0-xxxxxxxx',
      'Bearer access-1-xxxxxxxx',
      'Bearer access-2-$xxxxxxx',
    ]);
    expect(provider).toMatchObject({ issued: 2, refused: 0 });
  });

  it('refreshes again in one run when the file holds an access token from a variable (a provider that does not rotate)', async () => {
    c = await openConformance({ vars: { LEDGER_ACCESS: 'access-0-xxxxxxxx' } });
    let issued = 0;
    let valid = 'none-yet'; // the file's token has expired
    c.api
      .on('POST /oauth/token', (req) => {
        expect(new URLSearchParams(String(req.body ?? '')).get('refresh_token')).toBe('fixed-refresh-xxxxxxxx');
        valid = `access-${++issued}-xxxxxxxx`;
        return { body: { access_token: valid } };
      })
      .on('GET /one', (req) => {
        const ok = req.headers.authorization === `Bearer ${valid}`;
        if (ok) valid = 'expired-meanwhile'; // the token expires between the two fetches
        return ok ? { body: { items: [{ id: 'a' }] } } : { status: 401, body: { error: 'expired' } };
      })
      .on('GET /two', (req) => (req.headers.authorization === `Bearer ${valid}` ? { body: { items: [{ id: 'b' }] } } : { status: 401, body: { error: 'expired' } }));
    const authFile = writeAuthFile(c.dir, { Api: { type: 'oauth2', accessToken: '$LEDGER_ACCESS', refreshToken: 'fixed-refresh-xxxxxxxx', tokenEndpoint: `${c.api.url}/oauth/token` } });
    const twice = MISSION.replace('get "/invoices"\n    for x in response.items { store x -> out { key: .id } }', 'get "/one"\n    for x in response.items { store x -> out { key: .id } }\n    get "/two"\n    for x in response.items { store x -> out { key: .id } }');
    expect(twice).toContain('/two');
    const result = await c.start(c.mission('ledger', twice), { authFile });
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    // One refresh per fetch: the second exchanges again, where it had sent the file's stale token and failed.
    expect(issued).toBe(2);
    expect(await c.store(result.runId, 'out')).toEqual({ a: { id: 'a' }, b: { id: 'b' } });
  });

  it('says so when the refresh token comes from a variable, and leaves the file as it was', async () => {
    c = await openConformance({ vars: { LEDGER_REFRESH: 'refresh-0-xxxxxxxx' } });
    const provider = rotatingProvider(c);
    const entry = { type: 'oauth2', accessToken: 'stale-access-xxxxxxxx', refreshToken: '${LEDGER_REFRESH}', tokenEndpoint: `${c.api.url}/oauth/token` };
    const authFile = writeAuthFile(c.dir, { Api: entry });
    const progress: string[] = [];
    const result = await c.start(c.mission('ledger', MISSION), { authFile }, { progress: (line) => progress.push(line) });
    expect(result.status).toBe('completed');
    expect(provider.issued).toBe(1);
    // The access token is the file's own literal: it is kept; the variable's field is not touched.
    expect(JSON.parse(fs.readFileSync(authFile, 'utf8')).Api).toEqual({ ...entry, accessToken: 'access-1-$$xxxxxxx' });
    expect(progress.filter((l) => l.startsWith('warning:'))).toEqual([
      `warning: source "Api": ${authFile} takes its "refreshToken" from a variable, which the engine cannot update; a new refresh token the token endpoint issues is used by this run only, and the next run presents the old one, which a provider that rotates refresh tokens refuses`,
    ]);
  });

  it('says so when the credentials come from REQON_ variables', async () => {
    c = await openConformance({ vars: { REQON_API_TYPE: 'oauth2', REQON_API_TOKEN: 'stale-access-xxxxxxxx', REQON_API_REFRESH_TOKEN: 'refresh-0-xxxxxxxx', REQON_API_TOKEN_ENDPOINT: 'set below' } });
    const provider = rotatingProvider(c);
    (c.env.vars as Record<string, string>)['REQON_API_TOKEN_ENDPOINT'] = `${c.api.url}/oauth/token`;
    const progress: string[] = [];
    const result = await c.start(c.mission('ledger', MISSION), {}, { progress: (line) => progress.push(line) });
    expect(result.status).toBe('completed');
    expect(provider.issued).toBe(1);
    expect(progress.filter((l) => l.startsWith('warning:'))).toEqual([
      'warning: source "Api": the token endpoint issued a new refresh token; this run uses it, but REQON_API_REFRESH_TOKEN still holds the old one, which a provider that rotates refresh tokens refuses on the next run: keep oauth2 credentials in an --auth file to have them kept',
    ]);
  });
});

describe('a short token from a refresh', () => {
  it('is warned about, as a short credential read at start is', async () => {
    c = await openConformance();
    c.api
      .on('POST /oauth/token', { body: { access_token: 'k9Zq3x' } })
      .on('GET /invoices', (req) => (req.headers.authorization === 'Bearer k9Zq3x' ? { body: { items: [{ id: 'inv-1' }] } } : { status: 401, body: { error: 'expired' } }));
    const authFile = writeAuthFile(c.dir, { Api: { type: 'oauth2', accessToken: 'stale-access-xxxxxxxx', refreshToken: 'refresh-0-xxxxxxxx', tokenEndpoint: `${c.api.url}/oauth/token` } });
    const progress: string[] = [];
    const result = await c.start(c.mission('ledger', MISSION), { authFile }, { progress: (line) => progress.push(line) });
    expect(result.status).toBe('completed');
    expect(progress.filter((l) => l.startsWith('warning:'))).toEqual([
      'warning: a token the token endpoint issued for source "Api" is shorter than 8 characters, too short to be told apart from data; it is redacted in headers and query parameters only',
    ]);
  });
});
