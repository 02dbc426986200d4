/**
 * One Content-Security-Policy for the studio's three carriers (engine/server/csp.ts), and the
 * desktop app's `reqon-studio://app` origin (electron/app-protocol.ts): the handler's path
 * resolution refuses everything outside renderer/dist, and IPC answers only that origin's page.
 * (Electron itself is not installed here; these are the parts that do not need its binary.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headerCsp, META_CSP, metaCspOf } from '../../engine/server/csp.js';
import { APP_INDEX_URL, isAppPage, resolveAppRequest } from '../../electron/app-protocol.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');

function directives(policy: string): Map<string, string> {
  return new Map(policy.split(';').map((d) => d.trim()).filter(Boolean).map((d) => [d.split(/\s+/)[0]!, d] as const));
}

describe('the CSP', () => {
  it('renderer/index.html carries exactly the meta policy of csp.ts', () => {
    expect(metaCspOf(fs.readFileSync(path.join(REPO, 'renderer', 'index.html'), 'utf8'))).toBe(META_CSP);
  });

  it('the header is the meta policy plus frame-ancestors, and names only this server as a WebSocket peer', () => {
    const meta = directives(META_CSP);
    const header = directives(headerCsp(4123));
    for (const [name, value] of meta) if (name !== 'connect-src') expect(header.get(name)).toBe(value);
    expect(header.get('frame-ancestors')).toBe("frame-ancestors 'none'");
    expect(header.get('connect-src')).toBe("connect-src 'self' ws://127.0.0.1:4123 ws://localhost:4123");
    expect(directives(headerCsp()).get('connect-src')).toBe("connect-src 'self'");
  });

  it('allows no other host, no eval, no inline script, no plugins', () => {
    for (const policy of [META_CSP, headerCsp(1), headerCsp()]) {
      expect(policy).not.toMatch(/\*|https?:(?!\/\/)|ws:(?!\/\/)|'unsafe-eval'/);
      expect(directives(policy).get('script-src')).toBe("script-src 'self'");
      expect(directives(policy).get('object-src')).toBe("object-src 'none'");
    }
  });
});

describe('the desktop app protocol', () => {
  let dist: string;
  let outside: string;
  beforeAll(() => {
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-app-outside-'));
    dist = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-app-dist-'));
    fs.mkdirSync(path.join(dist, 'assets'));
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html>');
    fs.writeFileSync(path.join(dist, 'assets', 'app.js'), 'export {}');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dist, 'assets', 'link.js'));
  });
  afterAll(() => {
    fs.rmSync(dist, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it('serves the build with content types', () => {
    expect(resolveAppRequest(dist, APP_INDEX_URL)).toMatchObject({ contentType: 'text/html; charset=utf-8' });
    expect(resolveAppRequest(dist, 'reqon-studio://app/assets/app.js')?.body.toString()).toBe('export {}');
  });

  it.each([
    'reqon-studio://app/../secret.txt',
    'reqon-studio://app/%2e%2e/secret.txt',
    'reqon-studio://app/assets/..%2f..%2fsecret.txt',
    'reqon-studio://app/..%5csecret.txt',
    'reqon-studio://app/assets/link.js',
    'reqon-studio://app/assets',
    'reqon-studio://app/%00index.html',
    'reqon-studio://other/index.html',
    'file:///etc/passwd',
    'not a url',
  ])('refuses %s', (url) => {
    const got = resolveAppRequest(dist, url);
    expect(got === null || !got.body.toString().includes('secret')).toBe(true);
    if (!url.includes('/../')) expect(got).toBeNull();
  });

  it('takes IPC only from the app page itself', () => {
    expect(isAppPage(APP_INDEX_URL)).toBe(true);
    expect(isAppPage(`${APP_INDEX_URL}?run=r1#x`)).toBe(true);
    for (const url of ['file:///x/renderer/dist/index.html', 'https://evil.example/index.html', 'reqon-studio://evil/index.html', 'reqon-studio://app/other.html', '']) {
      expect(isAppPage(url), url).toBe(false);
    }
  });
});
