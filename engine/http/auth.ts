/**
 * Turns a source's credentials into what a request carries (headers or query parameters) and
 * refreshes OAuth2 access tokens on a 401.
 *
 * Invariants: one `AuthSession` per source per run holds the current tokens; they are never
 * logged, and are written only back where they came from, by its `TokenKeeper` (the `--auth`
 * file: providers that rotate refresh tokens refuse the old one once they issued a new one);
 * concurrent 401s share one refresh; a refresh is accepted only on a 2xx with an `access_token`;
 * error messages never include a token, a secret or the token endpoint's body.
 */

import type { HttpTransport } from '../env/env.js';
import { TransportError } from '../env/env.js';
import type { Credentials } from './credentials.js';

/** The most bytes a token endpoint's answer may have. */
const TOKEN_RESPONSE_MAX_BYTES = 1024 * 1024;
import { secretsOf } from './credentials.js';

export type OAuth2Credentials = Extract<Credentials, { type: 'oauth2' }>;

/** Where a source's oauth2 tokens are kept between runs (steps/token-keeper.ts). */
export interface TokenKeeper {
  /**
   * One refresh: `exchange` is called with the newest tokens kept (another run may have rotated
   * them since this session read them), and the tokens it returns are kept for the next run — or,
   * when another run has refreshed since, its tokens are taken as they are (`adopted`).
   */
  refresh(held: OAuth2Credentials, exchange: (from: OAuth2Credentials) => Promise<OAuth2Credentials>, timeoutMs: number): Promise<KeptTokens>;
}

export interface KeptTokens {
  credentials: OAuth2Credentials;
  /** Taken from where they are kept, not exchanged: they may be stale too, so a 401 may refresh again. */
  adopted: boolean;
}

/** What a refresh did: exchanged the refresh token, or adopted tokens another run had just refreshed. */
export type RefreshOutcome = 'exchanged' | 'adopted';

export interface AuthMaterial {
  headers: Record<string, string>;
  query: [string, string][];
}

export class AuthRefreshError extends Error {
  readonly code = 'auth-refresh';
  constructor(message: string) {
    super(message);
    this.name = 'AuthRefreshError';
  }
}

/** What a request without credentials carries; shared, so it must never be mutated. */
const NO_MATERIAL: AuthMaterial = Object.freeze({ headers: Object.freeze({}), query: Object.freeze([]) as unknown as [string, string][] }) as AuthMaterial;

export class AuthSession {
  private credentials: Credentials | undefined;
  private refreshing: Promise<RefreshOutcome> | undefined;
  /** Secrets seen during the run, including tokens that have since been replaced. */
  private readonly known = new Set<string>();
  /** `material()` for the current credentials; dropped whenever they change (a refresh). */
  private materialCache: AuthMaterial | undefined;
  /** `secrets()` as last listed; dropped whenever `known` grows. */
  private secretsCache: readonly string[] | undefined;

  constructor(
    readonly source: string,
    credentials: Credentials | undefined,
    private readonly keeper?: TokenKeeper,
  ) {
    this.credentials = credentials ? { ...credentials } : undefined;
    for (const s of secretsOf(this.credentials)) this.known.add(s);
  }

  get type(): Credentials['type'] | undefined {
    return this.credentials?.type;
  }

  /**
   * Headers and query parameters for the next request, from the current tokens. Asked on every
   * attempt, so it is built once per set of credentials; callers only read it (it is frozen).
   */
  material(): AuthMaterial {
    if (!this.materialCache) {
      const m = this.buildMaterial();
      Object.freeze(m.headers);
      Object.freeze(m.query);
      this.materialCache = Object.freeze(m);
    }
    return this.materialCache;
  }

  private buildMaterial(): AuthMaterial {
    const c = this.credentials;
    if (!c) return NO_MATERIAL;
    switch (c.type) {
      case 'bearer':
        return { headers: { Authorization: `Bearer ${c.token}` }, query: [] };
      case 'oauth2':
        return { headers: { Authorization: `Bearer ${c.accessToken}` }, query: [] };
      case 'basic': {
        const encoded = Buffer.from(`${c.username}:${c.password}`, 'utf8').toString('base64');
        return { headers: { Authorization: `Basic ${encoded}` }, query: [] };
      }
      case 'api_key':
        if (c.query) return { headers: {}, query: [[c.query, c.key]] };
        return { headers: { [c.header ?? 'X-API-Key']: c.key }, query: [] };
      default: {
        const never: never = c;
        throw new Error(`unhandled credentials ${JSON.stringify(never)}`);
      }
    }
  }

  /** True when a 401 can be answered by refreshing (oauth2 with a refresh token and an endpoint). */
  canRefresh(): boolean {
    const c = this.credentials;
    return c?.type === 'oauth2' && !!c.refreshToken && !!c.tokenEndpoint;
  }

  /** Every secret value this session has held (for the redactor, which asks on every request). */
  secrets(): readonly string[] {
    this.secretsCache ??= Object.freeze([...this.known]);
    return this.secretsCache;
  }

  /**
   * Exchanges the refresh token for a new access token through `transport`. Callers that arrive
   * while a refresh is in flight wait for the same one instead of starting another.
   */
  refresh(transport: HttpTransport, timeoutMs: number, signal?: AbortSignal): Promise<RefreshOutcome> {
    if (!this.refreshing) {
      this.refreshing = this.doRefresh(transport, timeoutMs, signal).finally(() => {
        this.refreshing = undefined;
      });
    }
    return this.refreshing;
  }

  private async doRefresh(transport: HttpTransport, timeoutMs: number, signal?: AbortSignal): Promise<RefreshOutcome> {
    const c = this.credentials;
    if (c?.type !== 'oauth2' || !c.refreshToken || !c.tokenEndpoint) {
      throw new AuthRefreshError(`source "${this.source}" has no refresh token and token endpoint; cannot refresh`);
    }
    const exchange = (from: OAuth2Credentials) => this.exchange(from, transport, timeoutMs, signal);
    const next = this.keeper ? await this.keeper.refresh(c, exchange, timeoutMs) : { credentials: await exchange(c), adopted: false };
    this.credentials = next.credentials;
    this.materialCache = undefined;
    this.learn(next.credentials);
    return next.adopted ? 'adopted' : 'exchanged';
  }

  private learn(credentials: Credentials): void {
    for (const s of secretsOf(credentials)) this.known.add(s);
    this.secretsCache = undefined;
  }

  /** Trades `c`'s refresh token at its token endpoint for new tokens. */
  private async exchange(c: OAuth2Credentials, transport: HttpTransport, timeoutMs: number, signal?: AbortSignal): Promise<OAuth2Credentials> {
    // Tokens another run kept since this session read its own are secrets of this run too.
    this.learn(c);
    if (!c.refreshToken || !c.tokenEndpoint) {
      throw new AuthRefreshError(`source "${this.source}" has no refresh token and token endpoint; cannot refresh`);
    }
    const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: c.refreshToken });
    if (c.clientId) form.set('client_id', c.clientId);
    if (c.clientSecret) form.set('client_secret', c.clientSecret);
    let status: number;
    let text: string;
    try {
      const res = await transport.send({
        method: 'POST',
        url: c.tokenEndpoint,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: form.toString(),
        timeoutMs,
        // A token answer is a few hundred bytes; a body past this is no token answer.
        maxResponseBytes: TOKEN_RESPONSE_MAX_BYTES,
        signal,
      });
      status = res.status;
      text = res.body;
    } catch (err) {
      const why = err instanceof TransportError ? err.code : 'error';
      throw new AuthRefreshError(`token refresh for source "${this.source}" failed (${why}); check tokenEndpoint`);
    }
    if (status < 200 || status >= 300) {
      // Only a 4xx says the grant was refused; a 5xx (or a 429) is the token endpoint failing,
      // which told a user to replace a refresh token that was fine.
      const why =
        status >= 500 || status === 429
          ? `the token endpoint failed (it answered ${status}), not the refresh token; resume the run once it is back`
          : 'the refresh token may be expired or revoked';
      throw new AuthRefreshError(`token refresh for source "${this.source}" was refused with ${status}; ${why}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new AuthRefreshError(`token refresh for source "${this.source}" returned a body that is not JSON`);
    }
    const b = (body ?? {}) as Record<string, unknown>;
    if (typeof b['access_token'] !== 'string' || b['access_token'] === '') {
      throw new AuthRefreshError(`token refresh for source "${this.source}" returned no access_token`);
    }
    const next: OAuth2Credentials = { ...c, accessToken: b['access_token'] };
    if (typeof b['refresh_token'] === 'string' && b['refresh_token'] !== '') next.refreshToken = b['refresh_token'];
    return next;
  }
}
