/**
 * The studio's Content-Security-Policy, in one place for its three carriers: the studio server's
 * response header, the `<meta>` tag in renderer/index.html (what a page loaded any other way
 * still obeys) and the Electron session's header. The page needs its own scripts and styles
 * (React sets inline styles), data: images and fonts, and a connection to its own origin only —
 * the HTTP API and, in a browser, the WebSocket on the same host and port. Nothing else: no
 * eval, no other hosts, no frames, no forms, no <base>.
 *
 * A meta tag cannot carry `frame-ancestors` (browsers ignore it there), so the header adds it;
 * everything else is the same string, which test/studio/csp.test.ts holds the meta tag to.
 */

const PAGE_DIRECTIVES: readonly string[] = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
];

/** The policy as the renderer's `<meta http-equiv="Content-Security-Policy">` states it. */
export const META_CSP = PAGE_DIRECTIVES.join('; ');

/**
 * The header: the meta policy plus `frame-ancestors 'none'`. For the browser build the
 * WebSocket's origin is named as well (`ws://127.0.0.1:PORT`), since browsers before CSP 3 do
 * not count ws: as 'self'.
 */
export function headerCsp(port?: number): string {
  const directives = PAGE_DIRECTIVES.map((d) =>
    port !== undefined && d.startsWith('connect-src ') ? `${d} ws://127.0.0.1:${port} ws://localhost:${port}` : d,
  );
  return [...directives, "frame-ancestors 'none'"].join('; ');
}

/** The CSP content of an HTML page's meta tag, or null when it has none. */
export function metaCspOf(html: string): string | null {
  const tag = /<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"\s*\/?>/i.exec(html);
  return tag === null ? null : tag[1]!;
}
