/**
 * Secrets stay out of what is recorded, and data stays as it is:
 * - redaction has no depth at which it gives up: a secret 300 levels deep is redacted, and a
 *   value too deep to inspect is refused (never recorded as it is);
 * - a credential too short to be a secret is redacted where credentials go (headers, query
 *   values), never searched for in data (the token `a` no longer turns the record id "a" into
 *   "[REDACTED]"), and it draws a warning;
 * - a malformed auth file's message shows no character of a secret;
 * - `env("NAME")` sees `--env` values and REQON_* only, and knows which of those are credentials.
 */
import { describe, expect, it } from 'vitest';
import { createFakeEnv, jsonResponse } from '../../engine/env/fake-env.js';
import { credentialEnvValues, missionEnvVar } from '../../engine/env/mission-env.js';
import { AuthSession } from '../../engine/http/auth.js';
import { executeRequest, type AfterAttempt, type BeforeAttempt } from '../../engine/http/client.js';
import { CredentialsError, parseCredentialsFile, shortSecretWarning } from '../../engine/http/credentials.js';
import { createRedactor, isSensitiveName, MAX_REDACT_DEPTH, REDACTED, RedactionError } from '../../engine/http/redact.js';
import { FetchError } from '../../engine/http/retry-policy.js';

const TOKEN = 'tok-0123456789abcdef';

function nest(levels: number, inner: unknown): unknown {
  let v = inner;
  for (let i = 0; i < levels; i++) v = { d: v };
  return v;
}

describe('redaction depth', () => {
  it('redacts a secret nested 300 levels deep', () => {
    const r = createRedactor([TOKEN]);
    const out = r.response({ status: 200, headers: {}, body: nest(300, { echo: TOKEN }) });
    expect(JSON.stringify(out)).not.toContain(TOKEN);
    expect(JSON.stringify(out)).toContain(REDACTED);
  });

  it('refuses a value too deep to inspect instead of recording it as it is', () => {
    const r = createRedactor([TOKEN]);
    expect(() => r.value(nest(MAX_REDACT_DEPTH + 5, TOKEN))).toThrow(RedactionError);
  });

  it('a request body too deep to inspect is not sent and fails the request', async () => {
    const env = createFakeEnv({ handler: () => jsonResponse(200, {}) });
    const auth = new AuthSession('Api', { type: 'bearer', token: TOKEN });
    const error = await executeRequest({ source: 'Api', method: 'POST', base: 'http://api.test', path: '/x', body: nest(MAX_REDACT_DEPTH + 5, TOKEN) }, { env, auth }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).code).toBe('unrecordable');
    expect(env.http.requests).toHaveLength(0);
  });

  it('a response that echoes the token 300 levels deep reaches no hook in plain text', async () => {
    const env = createFakeEnv({ autoAdvance: true, handler: () => jsonResponse(200, nest(300, { echo: TOKEN })) });
    const seen: (BeforeAttempt | AfterAttempt)[] = [];
    const auth = new AuthSession('Api', { type: 'bearer', token: TOKEN });
    const outcome = await executeRequest(
      { source: 'Api', method: 'GET', base: 'http://api.test', path: '/echo' },
      { env, auth },
      { beforeAttempt: (b) => void seen.push(b), afterAttempt: (a) => void seen.push(a) },
    ).catch((e: unknown) => e);
    expect(JSON.stringify(seen)).not.toContain(TOKEN);
    expect(String(outcome)).not.toContain(TOKEN);
  });
});

describe('short credentials', () => {
  it('are redacted in headers and query values but leave equal data alone', () => {
    const r = createRedactor(['a']);
    const req = r.request({ method: 'GET', url: 'http://h.test/items/a?k=a&page=2', headers: { Authorization: 'Bearer a', 'X-Key': 'a' } });
    expect(req.url).toBe(`http://h.test/items/a?k=${REDACTED}&page=2`);
    expect(req.headers).toEqual({ Authorization: REDACTED, 'X-Key': REDACTED });
    const { recorded: res } = r.response({ status: 200, headers: {}, body: [{ id: 'a', name: 'banana' }] });
    expect(res.body).toEqual([{ id: 'a', name: 'banana' }]);
  });

  it('draw a warning that names the source and never the value', () => {
    const warning = shortSecretWarning('Api', { type: 'bearer', token: 'abc' });
    expect(warning).toContain('"Api"');
    expect(warning).not.toContain('abc');
    expect(shortSecretWarning('Api', { type: 'bearer', token: TOKEN })).toBeUndefined();
  });
});

describe('a malformed auth file', () => {
  it('is reported without any character of its secrets', () => {
    const secret = 'SUPERSECRETVALUE';
    for (const text of [`{"Api": {"type": "bearer", "token": ${secret}}}`, `{"Api": {"type": "bearer", "token": "${secret}"`, `{"Api": {"type": "bearer", "token": "${secret}"},}`]) {
      const error = (() => {
        try {
          parseCredentialsFile(text, 'auth.json', {});
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(CredentialsError);
      const message = (error as Error).message;
      expect(message).toContain('auth.json: not valid JSON');
      for (let i = 0; i + 3 <= secret.length; i++) expect(message).not.toContain(secret.slice(i, i + 3));
    }
  });

  it('a malformed variable reference does not quote what follows it', () => {
    expect(() => parseCredentialsFile('{"Api": {"type": "bearer", "token": "${SUPERSECRETVALUE"}}', 'auth.json', {})).toThrow(CredentialsError);
    try {
      parseCredentialsFile('{"Api": {"type": "bearer", "token": "${SUPERSECRETVALUE"}}', 'auth.json', {});
    } catch (e) {
      expect((e as Error).message).not.toContain('SUPERSECRET');
    }
  });
});

describe('env("NAME")', () => {
  const processVars = { HOME: '/root', AWS_SECRET_ACCESS_KEY: 'aws-secret', REQON_REGION: 'eu', REQON_API_TOKEN: TOKEN };
  it('sees --env values and REQON_* only', () => {
    expect(missionEnvVar('HOME', {}, processVars)).toBeUndefined();
    expect(missionEnvVar('AWS_SECRET_ACCESS_KEY', {}, processVars)).toBeUndefined();
    expect(missionEnvVar('REQON_REGION', {}, processVars)).toBe('eu');
    expect(missionEnvVar('HOME', { HOME: '/given' }, processVars)).toBe('/given');
  });
  it('lists the visible values that are credentials, for redaction', () => {
    expect(credentialEnvValues({ MY_PASSWORD: 'pw-12345678', PLAIN: 'x' }, processVars).sort()).toEqual(['pw-12345678', TOKEN].sort());
  });
});

describe('credential names', () => {
  it('take `key` as a word, in any case or in camelCase, but never the engine\'s own Idempotency-Key', () => {
    // Azure API Management, Azure Functions, Google's ?key=, camelCase fields, settings.
    for (const name of ['Ocp-Apim-Subscription-Key', 'x-functions-key', 'key', 'subscriptionKey', 'AZURE_SUBSCRIPTION_KEY', 'X-Auth-Key', 'license.key', 'KEY1', 'key2', 'SUBSCRIPTIONKEY', 'clientkey', 'code']) {
      expect(isSensitiveName(name), name).toBe(true);
    }
    for (const name of ['Idempotency-Key', 'idempotencyKey', 'monkey', 'keyword', 'KEYCLOAK_URL', 'author', 'sort', 'country_code', 'zipcode', 'keys']) {
      expect(isSensitiveName(name), name).toBe(false);
    }
  });

  it('make a setting a secret the redactor knows', () => {
    expect(credentialEnvValues({ AZURE_SUBSCRIPTION_KEY: 'sub-0123456789abcdef', REGION: 'west' }, {})).toEqual(['sub-0123456789abcdef']);
  });
});
