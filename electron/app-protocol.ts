/**
 * The desktop app's own origin: the renderer is served from `reqon-studio://app/…` by a protocol
 * handler rather than from file://, so the page has a real origin of its own — CSP's 'self', the
 * IPC sender check and navigation all name exactly it, and no other file on disk is reachable
 * from the page. This module is the handler's pure half (no `electron` import, so it is
 * unit-tested in test/studio/electron-protocol.test.ts): which file a request URL names, under
 * the same rules as the browser build's static files (engine/server/static-files.ts — decoded
 * once, no `..`, no backslashes or NULs, no symlink out, regular files only).
 */
import { resolveStatic, type StaticFile } from '../engine/server/static-files.js';

export const APP_SCHEME = 'reqon-studio';
export const APP_HOST = 'app';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_INDEX_URL = `${APP_ORIGIN}/index.html`;

/** The file of renderer/dist a request names, or null (another host or scheme, outside the root, missing). */
export function resolveAppRequest(rendererDist: string, requestUrl: string): StaticFile | null {
  let url: URL;
  try {
    url = new URL(requestUrl);
  } catch {
    return null;
  }
  if (url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return null;
  return resolveStatic(rendererDist, url.pathname);
}

/** Whether a frame's URL is our page: the app origin, and nothing that navigated elsewhere. */
export function isAppPage(frameUrl: string): boolean {
  try {
    const url = new URL(frameUrl);
    return url.protocol === `${APP_SCHEME}:` && url.host === APP_HOST && url.pathname === '/index.html';
  } catch {
    return false;
  }
}
