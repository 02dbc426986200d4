import { describe, expect, it } from 'vitest';
import { createFakeEnv, jsonResponse } from '../../engine/env/fake-env.js';
import { AuthRefreshError, AuthSession } from '../../engine/http/auth.js';
import { createRedactor, isSensitiveName, REDACTED } from '../../engine/http/redact.js';

describe('AuthSession.material', () => {
  it('bearer and oauth2 send Authorization: Bearer', () => {
    expect(new AuthSession('A', { type: 'bearer', token: 't' }).material().headers).toEqual({ Authorization: 'Bearer t' });
    expect(new AuthSession('A', { type: 'oauth2', accessToken: 'at' }).material().headers).toEqual({ Authorization: 'Bearer at' });
  });
  it('basic sends base64(user:password)', () => {
    const h = new AuthSession('A', { type: 'basic', username: 'alice', password: 'pä ss' }).material().headers;
    expect(h['Authorization']).toBe(`Basic ${Buffer.from('alice:pä ss', 'utf8').toString('base64')}`);
  });
  it('api_key goes in X-API-Key by default, a named header, or a query parameter', () => {
    expect(new AuthSession('A', { type: 'api_key', key: 'k' }).material()).toEqual({ headers: { 'X-API-Key': 'k' }, query: [] });
    expect(new AuthSession('A', { type: 'api_key', key: 'k', header: 'X-Token' }).material().headers).toEqual({ 'X-Token': 'k' });
    expect(new AuthSession('A', { type: 'api_key', key: 'k', query: 'api_key' }).material()).toEqual({ headers: {}, query: [['api_key', 'k']] });
  });
  it('no credentials, nothing sent', () => {
    expect(new AuthSession('A', undefined).material()).toEqual({ headers: {}, query: [] });
  });
});

describe('AuthSession.refresh', () => {
  const creds = { type: 'oauth2' as const, accessToken: 'old', refreshToken: 'r1', tokenEndpoint: 'http://auth.test/token', clientId: 'cid' };

  it('posts the refresh form, keeps the new tokens, shares one refresh between callers', async () => {
    const env = createFakeEnv({ handler: () => jsonResponse(200, { access_token: 'new', refresh_token: 'r2' }) });
    const s = new AuthSession('A', creds);
    expect(s.canRefresh()).toBe(true);
    await Promise.all([s.refresh(env.http, 1000), s.refresh(env.http, 1000)]);
    expect(env.http.requests).toHaveLength(1);
    const req = env.http.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.headers['Content-Type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(req.body))).toEqual({ grant_type: 'refresh_token', refresh_token: 'r1', client_id: 'cid' });
    expect(s.material().headers).toEqual({ Authorization: 'Bearer new' });
    expect(s.secrets()).toEqual(expect.arrayContaining(['old', 'r1', 'new', 'r2']));
  });

  it('checks response.ok and the access_token, without leaking the body', async () => {
    const refused = createFakeEnv({ handler: () => jsonResponse(400, { error: 'invalid_grant', echo: 'r1' }) });
    const err = await new AuthSession('A', creds).refresh(refused.http, 1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthRefreshError);
    expect(String(err)).toMatch(/refused with 400; the refresh token may be expired or revoked/);
    expect(String(err)).not.toContain('r1');
    // A token endpoint that is down says so, not that the refresh token is bad.
    const down = createFakeEnv({ handler: () => jsonResponse(503, { error: 'unavailable' }) });
    const failed = await new AuthSession('A', creds).refresh(down.http, 1000).catch((e: unknown) => e);
    expect(String(failed)).toMatch(/refused with 503; the token endpoint failed \(it answered 503\), not the refresh token/);
    const empty = createFakeEnv({ handler: () => jsonResponse(200, { token_type: 'bearer' }) });
    await expect(new AuthSession('A', creds).refresh(empty.http, 1000)).rejects.toThrow(/no access_token/);
  });

  it('cannot refresh without a refresh token', () => {
    expect(new AuthSession('A', { type: 'oauth2', accessToken: 'a' }).canRefresh()).toBe(false);
    expect(new AuthSession('A', { type: 'bearer', token: 'a' }).canRefresh()).toBe(false);
  });
});

describe('redaction', () => {
  it('knows sensitive names', () => {
    for (const n of ['Authorization', 'proxy-authorization', 'Cookie', 'Set-Cookie', 'X-API-Key', 'x-auth-token', 'client_secret', 'Password', 'api_key', 'apikey', 'api-key', 'X-Auth-Key', 'auth', 'x-auth-email', 'aws_access_key_id', 'AccessKey', 'private_key'])
      expect(isSensitiveName(n), n).toBe(true);
    for (const n of ['Accept', 'offset', 'cursor', 'X-Client', 'author', 'author_id', 'authored_since', 'oauth_version'])
      expect(isSensitiveName(n), n).toBe(false);
  });

  it('redacts by name in headers and query, and by value everywhere', () => {
    const r = createRedactor(['s3cr3t-value', 'a b&c long']);
    const rec = r.request({
      method: 'POST',
      url: 'http://u:pw@h.test/p/s3cr3t-value?offset=2&access_token=zzz&q=a%20b%26c%20long&x=a+b%26c+long#frag',
      headers: { Authorization: 'Bearer s3cr3t-value', 'X-Client': 'has s3cr3t-value inside', Cookie: 'sid=1' },
      body: { nested: [{ v: 'pre-s3cr3t-value-post' }], n: 1, ok: true },
    });
    const text = JSON.stringify(rec);
    expect(text).not.toContain('s3cr3t-value');
    expect(text).not.toContain('zzz');
    expect(text).not.toContain('a%20b%26c%20long');
    expect(text).not.toContain('a+b%26c+long');
    expect(text).not.toContain('pw@');
    expect(rec.url).toBe(`http://${REDACTED}@h.test/p/${REDACTED}?offset=2&access_token=${REDACTED}&q=${REDACTED}&x=${REDACTED}#frag`);
    expect(rec.headers).toEqual({ Authorization: REDACTED, 'X-Client': `has ${REDACTED} inside`, Cookie: REDACTED });
    expect(rec.body).toEqual({ nested: [{ v: `pre-${REDACTED}-post` }], n: 1, ok: true });
  });

  it('keeps body fields with token-like names (cursors are data) but redacts secret values in them', () => {
    const r = createRedactor(['s3cr3t-value']);
    const { recorded: res, replacedInBody } = r.response({ status: 200, headers: { 'set-cookie': 'a=b' }, body: { next_page_token: 'abc', echo: 's3cr3t-value', ['s3cr3t-value']: 's3cr3t-value s3cr3t-value' } });
    expect(res.body).toEqual({ next_page_token: 'abc', echo: REDACTED, [REDACTED]: `${REDACTED} ${REDACTED}` });
    expect(res.headers['set-cookie']).toBe(REDACTED);
    // Counted (key included), so the run can say its answer was changed (client.ts).
    expect(replacedInBody).toBe(4);
    expect(r.response({ status: 200, headers: {}, body: { a: 'plain' } }).replacedInBody).toBe(0);
  });

  it('follows a live secret list', () => {
    const secrets = ['one-secret'];
    const r = createRedactor(() => secrets);
    expect(r.text('one-secret two-secret')).toBe(`${REDACTED} two-secret`);
    secrets.push('two-secret');
    expect(r.text('one-secret two-secret')).toBe(`${REDACTED} ${REDACTED}`);
  });
});
