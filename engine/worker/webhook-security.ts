/**
 * Who may deliver a webhook: the checks `webhook-server.ts` makes before it reads a body.
 *
 * The endpoint is a door into waiting runs, and a web page open in the user's browser can reach
 * 127.0.0.1. So, unless the operator allows browsers:
 * - a request carrying `Origin`, or `Sec-Fetch-Site` other than `none`, came from a page: 403;
 * - a body must be declared JSON (`application/json` or `…+json`): the content types a page can
 *   send without a CORS preflight (text/plain, forms) are refused with 415;
 * - on a loopback address the `Host` must name it (`127.0.0.1:PORT`, `localhost:PORT`,
 *   `[::1]:PORT`), as the studio checks: DNS rebinding gets 421.
 * A worker listening on any other address must have a secret, and every delivery is then signed
 * by the Standard Webhooks scheme (https://www.standardwebhooks.com, used by Svix, Zapier, Twilio…
 * so senders' libraries work): `webhook-signature: v1,<base64 HMAC-SHA256>` over
 * `webhook-id.webhook-timestamp.body`, the timestamp within TOLERANCE_SECONDS of now. The delivery
 * id is then `webhook-id` — signed, so a resend under a new id is a new signature the sender
 * never made — and the inbox binds that id to the first path it was delivered to.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** Standard Webhooks' recommended window, both ways (clock skew and replays). */
export const TOLERANCE_SECONDS = 5 * 60;

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith('127.');
}

/** A refusal: the status and the one-line reason the sender gets. */
export interface Refusal {
  status: number;
  error: string;
}

export interface RequestGate {
  /** The address the server listens on. */
  host: string;
  port: number;
  /** Accept requests from browser pages (Origin, Sec-Fetch-Site, any content type). Default false. */
  allowBrowsers: boolean;
}

/** The checks on the request line and headers, before the body is read; undefined when it may proceed. */
export function refuseRequest(headers: IncomingHttpHeaders, gate: RequestGate): Refusal | undefined {
  if (isLoopback(gate.host) && !hostNamesLoopback(headers.host, gate.host, gate.port)) {
    const names = [...new Set([`${hostPart(gate.host)}:${gate.port}`, `127.0.0.1:${gate.port}`, `localhost:${gate.port}`, `[::1]:${gate.port}`])];
    return { status: 421, error: `this endpoint answers only to ${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}` };
  }
  // A compressed body would be taken for bytes that are not JSON: say what to send instead.
  const encoding = headers['content-encoding']?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    return { status: 415, error: `content-encoding ${JSON.stringify(encoding.slice(0, 40))} is not accepted: send the body uncompressed` };
  }
  // JSON is UTF-8 (RFC 8259): a body in another charset was decoded into other text (helper 96).
  // ASCII is UTF-8's first half, so a body said to be in it is taken (and refused if it is not UTF-8).
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && !['utf-8', 'utf8', 'us-ascii', 'ascii'].includes(charset)) {
    return { status: 415, error: `webhook bodies must be UTF-8 JSON, got charset ${JSON.stringify(charset.slice(0, 40))}` };
  }
  if (gate.allowBrowsers) return undefined;
  const site = headers['sec-fetch-site'];
  if (headers.origin !== undefined || (site !== undefined && site !== 'none')) {
    return { status: 403, error: 'webhooks are not accepted from web pages (the request has an Origin or Sec-Fetch-Site header)' };
  }
  const type = headers['content-type'];
  if (type !== undefined && !isJsonType(type)) {
    return { status: 415, error: `webhook bodies must be JSON (content-type application/json), got ${JSON.stringify(type.slice(0, 80))}` };
  }
  return undefined;
}

/** The listening address as a Host header names it (an IPv6 one in brackets). */
function hostPart(host: string): string {
  return host.includes(':') ? `[${host}]` : host.toLowerCase();
}

function hostNamesLoopback(host: string | undefined, listening: string, port: number): boolean {
  if (host === undefined) return false;
  const h = host.toLowerCase();
  // The address it listens on (127.0.0.2 is loopback too: its URL must work), and the usual names.
  return h === `${hostPart(listening)}:${port}` || h === `127.0.0.1:${port}` || h === `localhost:${port}` || h === `[::1]:${port}`;
}

function isJsonType(contentType: string): boolean {
  const mime = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return mime === 'application/json' || (mime.startsWith('application/') && mime.endsWith('+json'));
}

/**
 * The key of a Standard Webhooks secret: `whsec_<base64>` is decoded, any other text taken as its
 * bytes. One that is no key — `whsec_` with nothing, or with text that is not base64, which
 * decoded to no bytes and so let anyone sign (helper 96) — is refused (WebhookSecretError).
 */
export function webhookKey(given: string): Buffer {
  // Read from a file or a secret store, it often ends in a newline: not part of the key (helper 97).
  const secret = given.trim();
  if (!secret.startsWith('whsec_')) {
    if (secret.trim() === '') throw new WebhookSecretError('the webhook secret is empty');
    return Buffer.from(secret, 'utf8');
  }
  const encoded = secret.slice('whsec_'.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.replace(/=+$/, '').length % 4 === 1) {
    throw new WebhookSecretError('the webhook secret starts with whsec_ but what follows is not base64 (Standard Webhooks secrets are whsec_<base64 of the key>)');
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length < 8) throw new WebhookSecretError(`the webhook secret's key is ${key.length} byte${key.length === 1 ? '' : 's'} long, too short to be one (at least 8; Standard Webhooks keys are 24 to 64)`);
  return key;
}

export class WebhookSecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSecretError';
  }
}

/** `v1,<base64>` of the HMAC over `id.timestamp.body` (what a sender puts in `webhook-signature`). */
export function signWebhook(key: Buffer, id: string, timestamp: string, body: Buffer): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`;
}

/**
 * Verifies a Standard Webhooks signature; the signed delivery id, or a refusal (401) that says
 * which part is missing or wrong — never what the right signature would be.
 */
export function verifySignature(headers: IncomingHttpHeaders, body: Buffer, key: Buffer, nowMs: number): { id: string } | Refusal {
  const id = single(headers['webhook-id']);
  const timestamp = single(headers['webhook-timestamp']);
  const signatures = single(headers['webhook-signature']);
  if (!id || !timestamp || !signatures) {
    return { status: 401, error: 'signed webhooks need webhook-id, webhook-timestamp and webhook-signature headers (Standard Webhooks)' };
  }
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(Number(timestamp) - nowMs / 1000) > TOLERANCE_SECONDS) {
    return { status: 401, error: `webhook-timestamp is not within ${TOLERANCE_SECONDS} seconds of now` };
  }
  const expected = Buffer.from(signWebhook(key, id, timestamp, body));
  // Several signatures (key rotation) may be listed, space-separated: one valid one suffices.
  for (const given of signatures.split(' ')) {
    const g = Buffer.from(given);
    if (g.length === expected.length && timingSafeEqual(g, expected)) return { id };
  }
  return { status: 401, error: 'webhook-signature does not match (v1,<base64 HMAC-SHA256 of "id.timestamp.body">)' };
}

function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
