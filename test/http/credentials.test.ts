import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CredentialsError,
  discoverCredentials,
  envPrefix,
  interpolateVars,
  loadCredentialsFile,
  parseCredentialsFile,
  resolveCredentials,
  secretsOf,
} from '../../engine/http/credentials.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-cred-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('interpolateVars', () => {
  const vars = { TOKEN: 'abc', EMPTY: '' };
  it('replaces $VAR, ${VAR} and ${VAR:-default}, and $$ is a literal $', () => {
    expect(interpolateVars('$TOKEN-${TOKEN}', vars, 'f')).toBe('abc-abc');
    expect(interpolateVars('${MISSING:-dflt}', vars, 'f')).toBe('dflt');
    expect(interpolateVars('${EMPTY:-dflt}', vars, 'f')).toBe('dflt');
    expect(interpolateVars('${TOKEN:-dflt}', vars, 'f')).toBe('abc');
    expect(interpolateVars('pa$$word', vars, 'f')).toBe('pa$word');
    expect(interpolateVars('cost: 5$', vars, 'f')).toBe('cost: 5$');
  });
  it('an unset variable without default is an error naming the variable and the place', () => {
    expect(() => interpolateVars('$NOPE', vars, 'auth.json: "Api".token')).toThrow(CredentialsError);
    expect(() => interpolateVars('${NOPE}', vars, 'auth.json: "Api".token')).toThrow(/auth\.json: "Api"\.token uses \$NOPE, which is not set/);
  });
  it('a malformed reference is an error', () => {
    expect(() => interpolateVars('${1BAD}', vars, 'f')).toThrow(/malformed/);
  });
});

describe('auth file', () => {
  it('loads every type with interpolation', () => {
    const file = path.join(dir, 'auth.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        Api: { type: 'bearer', token: '$API_TOKEN' },
        Basic: { type: 'basic', username: 'u', password: '${PW:-secret}' },
        Key: { type: 'api_key', key: 'k1', header: 'X-Key' },
        OAuth: { type: 'oauth2', accessToken: 'at', refreshToken: 'rt', tokenEndpoint: 'http://127.0.0.1/t' },
      }),
    );
    const creds = loadCredentialsFile(file, { API_TOKEN: 't0k' });
    expect(creds['Api']).toEqual({ type: 'bearer', token: 't0k' });
    expect(creds['Basic']).toEqual({ type: 'basic', username: 'u', password: 'secret' });
    expect(creds['Key']).toEqual({ type: 'api_key', key: 'k1', header: 'X-Key' });
    expect(creds['OAuth']).toMatchObject({ type: 'oauth2', accessToken: 'at', refreshToken: 'rt' });
  });

  it('reports the file and variable when a variable is unset', () => {
    const file = path.join(dir, 'unset.json');
    fs.writeFileSync(file, JSON.stringify({ Api: { type: 'bearer', token: '$API_TOKEN' } }));
    expect(() => loadCredentialsFile(file, {})).toThrow(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*\\$API_TOKEN, which is not set`));
  });

  it('rejects bad shapes with clear messages', () => {
    expect(() => parseCredentialsFile('{', 'a.json', {})).toThrow(/a\.json: not valid JSON/);
    expect(() => parseCredentialsFile('[]', 'a.json', {})).toThrow(/expected an object keyed by source name/);
    expect(() => parseCredentialsFile('{"Api":{"type":"magic"}}', 'a.json', {})).toThrow(/unknown credential type "magic"/);
    expect(() => parseCredentialsFile('{"Api":{"type":"bearer"}}', 'a.json', {})).toThrow(/needs a non-empty "token"/);
    expect(() => parseCredentialsFile('{"Api":{"type":"bearer","token":"x","tokn":"y"}}', 'a.json', {})).toThrow(/unknown field "tokn"/);
    expect(() => parseCredentialsFile('{"Api":{"type":"bearer","token":5}}', 'a.json', {})).toThrow(/expected a string but got: number/);
    expect(() => loadCredentialsFile(path.join(dir, 'missing.json'), {})).toThrow(/cannot read auth file .*ENOENT/);
  });
});

describe('environment discovery', () => {
  it('upper-cases the source and turns non-alphanumerics into _', () => {
    expect(envPrefix('my-api.v2')).toBe('REQON_MY_API_V2_');
  });
  it('finds bearer, api_key, basic and typed oauth2 credentials', () => {
    expect(discoverCredentials('Api', { REQON_API_TOKEN: 't' })).toEqual({ type: 'bearer', token: 't' });
    expect(discoverCredentials('Api', { REQON_API_API_KEY: 'k' })).toEqual({ type: 'api_key', key: 'k' });
    expect(discoverCredentials('Api', { REQON_API_USERNAME: 'u', REQON_API_PASSWORD: 'p' })).toEqual({ type: 'basic', username: 'u', password: 'p' });
    expect(
      discoverCredentials('Api', { REQON_API_TYPE: 'oauth2', REQON_API_TOKEN: 'at', REQON_API_REFRESH_TOKEN: 'rt', REQON_API_TOKEN_ENDPOINT: 'http://e' }),
    ).toEqual({ type: 'oauth2', accessToken: 'at', refreshToken: 'rt', tokenEndpoint: 'http://e' });
    // Without _TYPE, a declared oauth2 source reads _TOKEN as its access token.
    expect(discoverCredentials('Api', { REQON_API_TOKEN: 'at' }, 'oauth2')).toEqual({ type: 'oauth2', accessToken: 'at' });
    expect(discoverCredentials('Api', {})).toBeUndefined();
  });
  it('a declared type with its variable missing is an error', () => {
    expect(() => discoverCredentials('Api', { REQON_API_TYPE: 'basic', REQON_API_USERNAME: 'u' })).toThrow(/REQON_API_PASSWORD is not set/);
    expect(() => discoverCredentials('Api', { REQON_API_TYPE: 'magic' })).toThrow(/REQON_API_TYPE is "magic"/);
  });
});

describe('resolveCredentials', () => {
  it('prefers the file, then the environment', () => {
    const file = { Api: { type: 'bearer' as const, token: 'from-file' } };
    expect(resolveCredentials({ source: 'Api', declared: 'bearer', file, vars: { REQON_API_TOKEN: 'env' } })).toEqual({ type: 'bearer', token: 'from-file' });
    expect(resolveCredentials({ source: 'Api', declared: 'bearer', vars: { REQON_API_TOKEN: 'env' } })).toEqual({ type: 'bearer', token: 'env' });
  });
  it('a mismatch between declared auth and the credentials is a clear error', () => {
    const file = { Api: { type: 'basic' as const, username: 'u', password: 'p' } };
    expect(() => resolveCredentials({ source: 'Api', declared: 'bearer', file, fileName: 'auth.json', vars: {} })).toThrow(
      /source "Api" declares auth: bearer but auth\.json gives credentials of type basic/,
    );
  });
  it('missing credentials are an error unless not required; auth: none uses none', () => {
    expect(() => resolveCredentials({ source: 'Api', declared: 'api_key', vars: {} })).toThrow(/set REQON_API_API_KEY/);
    expect(resolveCredentials({ source: 'Api', declared: 'bearer', vars: {}, required: false })).toBeUndefined();
    expect(resolveCredentials({ source: 'Api', declared: 'none', vars: { REQON_API_TOKEN: 'x' } })).toBeUndefined();
    expect(() => resolveCredentials({ source: 'Api', declared: 'none', file: { Api: { type: 'bearer', token: 'x' } }, vars: {} })).toThrow(/declares auth: none/);
  });
  it('error messages never contain the secret', () => {
    const file = { Api: { type: 'basic' as const, username: 'u', password: 'hunter2' } };
    try {
      resolveCredentials({ source: 'Api', declared: 'bearer', file, vars: {} });
      expect.unreachable();
    } catch (e) {
      expect(String(e)).not.toContain('hunter2');
    }
  });
  it('secretsOf lists every secret value', () => {
    expect(secretsOf({ type: 'basic', username: 'u', password: 'p' })).toEqual(['p', Buffer.from('u:p').toString('base64')]);
    expect(secretsOf({ type: 'oauth2', accessToken: 'a', refreshToken: 'r', clientSecret: 's' })).toEqual(['a', 'r', 's']);
  });
});
