/**
 * A request's identity: what an effect asked of the world, recorded with its intent and compared
 * when a replay reaches that effect again. Method, URL (secrets redacted, auth query parameters
 * left out), a sha256 of the body's canonical JSON and one of the headers the mission gives it
 * (source `headers`, the request's own `headers:`, a `since` header) — never auth headers, which
 * may rotate between the original run and its resume without the request being any different —
 * and the name of the source it goes through, since two sources of one base URL differ by those
 * credentials.
 *
 * A replay whose mission now asks for a different request at a recorded effect (an edited URL,
 * method, body or header) has diverged: answering it with the recorded response, or sending it under the
 * recorded request's Idempotency-Key, would both be lies.
 */
import type { RequestIdentity } from '../log/events.js';

export type { RequestIdentity };

/** `recorded` by an engine before header identities has no `headersSha256`: its headers are not compared. */
export function sameRequest(recorded: RequestIdentity, asked: RequestIdentity): boolean {
  return (
    recorded.method === asked.method &&
    recorded.url === asked.url &&
    recorded.bodySha256 === asked.bodySha256 &&
    (recorded.headersSha256 === undefined || recorded.headersSha256 === asked.headersSha256) &&
    (recorded.source === undefined || recorded.source === asked.source) &&
    (recorded.namedValuesSha256 === undefined || recorded.namedValuesSha256 === asked.namedValuesSha256)
  );
}

/** `POST /events` (origin left out when both share it), for messages that compare two requests. */
export function describeRequestChange(recorded: RequestIdentity, asked: RequestIdentity): string {
  const sameOrigin = originOf(recorded.url) === originOf(asked.url);
  const shown = (r: RequestIdentity): string => `${r.method} ${sameOrigin ? pathOf(r.url) : r.url}`;
  if (recorded.method === asked.method && recorded.url === asked.url) {
    if (recorded.source !== undefined && recorded.source !== asked.source && recorded.bodySha256 === asked.bodySha256) {
      // Sources of one base URL differ by their credentials: another source is another account.
      return `the source of ${shown(recorded)} changed (${recorded.source} became ${asked.source ?? 'none'}: the same URL under another source's credentials)`;
    }
    if (recorded.bodySha256 === asked.bodySha256 && recorded.headersSha256 === asked.headersSha256 && recorded.namedValuesSha256 !== asked.namedValuesSha256) {
      return `a credential-named query parameter or header of ${shown(recorded)} changed its value (a \`*_token\`, \`*secret*\`, \`*api_key*\` or \`Cookie\`: hidden from the log, told apart by sha256 ${short(recorded.namedValuesSha256)} and ${short(asked.namedValuesSha256)})`;
    }
    if (recorded.bodySha256 === asked.bodySha256) {
      return `the headers of ${shown(recorded)} changed (its source, request or since headers: sha256 ${short(recorded.headersSha256)} became ${short(asked.headersSha256)})`;
    }
    return `the body of ${shown(recorded)} changed (sha256 ${short(recorded.bodySha256)} became ${short(asked.bodySha256)})`;
  }
  const bodyNote = recorded.bodySha256 === asked.bodySha256 ? '' : ', and its body changed';
  return `${shown(recorded)} became ${shown(asked)}${bodyNote}`;
}

export function describeRequest(r: RequestIdentity): string {
  return `${r.method} ${r.url}${r.bodySha256 ? ` (body sha256 ${short(r.bodySha256)})` : ''}`;
}

function short(sha: string | undefined): string {
  return sha ? sha.slice(0, 12) : 'none';
}

function originOf(url: string): string {
  const match = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url);
  return match ? match[0] : '';
}

/** The path and query of `url`, its origin left out (`/` for none). */
export function pathOf(url: string): string {
  return url.slice(originOf(url).length) || '/';
}
