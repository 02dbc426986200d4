/**
 * One logical HTTP request (one page) with everything around it: circuit breaker, rate limit,
 * auth (and OAuth2 refresh on 401), per-attempt timeout, retries with backoff.
 *
 * The caller (the executor, through the journal) records each attempt durably through the hooks:
 * `beforeAttempt` receives the redacted request and the request is sent only after it resolves
 * (the intent is committed before anything leaves the process); `afterAttempt` receives the
 * redacted response or error, the delay before the next attempt and the duration.
 *
 * Invariants: every attempt that goes out is announced by `beforeAttempt` first and reported by
 * `afterAttempt` after; nothing the hooks receive, and nothing returned or thrown, contains a
 * known secret; a final non-allowed 4xx/5xx is a `FetchError` (never data); an empty/204 body is
 * `null`, not a failure; a 2xx body that is not JSON is a `FetchError`.
 */

import type { Clock, Env, HttpRequest, HttpResponse, HttpTransport } from '../env/env.js';
import { TransportError } from '../env/env.js';
import { JsonDepthError, MAX_JSON_DEPTH, parseJsonInput } from '../env/json-input.js';
import { UnloggableValueError } from '../log/loggable.js';
import { setOwn } from '../eval/values.js';
import type { ErrorInfo, RecordedRequest, RecordedResponse } from '../log/events.js';
import type { AuthSession } from './auth.js';
import { AuthRefreshError } from './auth.js';
import { CircuitOpenError, type BreakerOptions, type CircuitBreaker } from './circuit-breaker.js';
import type { RateLimitOptions, RateLimiter } from './rate-limiter.js';
import type { Redactor } from './redact.js';
import { createRedactor, isSensitiveName, REDACTED, RedactionError } from './redact.js';
import type { QueryParams } from './request-builder.js';
import { buildRequest, buildUrl, headerValue } from './request-builder.js';
import type { AttemptOutcome, Decision, RetryPolicy } from './retry-policy.js';
import { classifyAttempt, failureMessage, FetchError, resolveRetryPolicy } from './retry-policy.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
/** A source's `maxResponseBytes` unless it says otherwise: far above real pages, far below memory. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** Refreshes of one request: an adoption of another run's tokens, then one exchange of its own. */
const MAX_REFRESHES = 2;

export interface RequestSpec {
  /** Source name: keys the breaker and limiter, and appears in errors. */
  source: string;
  method: string;
  /** Effective base URL (after `--source` overrides). */
  base: string;
  /** Path after interpolation (may carry its own `?query`). */
  path: string;
  sinceQuery?: QueryParams;
  pageQuery?: QueryParams;
  /** Source headers, already evaluated. */
  sourceHeaders?: Record<string, string>;
  sinceHeaders?: Record<string, string>;
  /** The request body value; `undefined` means no body. */
  body?: unknown;
  idempotencyKey?: string;
  /** Statuses returned as data instead of failing. */
  allow?: readonly number[];
  retry?: RetryPolicy | Parameters<typeof resolveRetryPolicy>[0];
  /** The source's timeout (ms); `retry.timeout` wins over it; default 30 000. */
  sourceTimeout?: number;
  /** The source's `maxResponseBytes`; default DEFAULT_MAX_RESPONSE_BYTES. */
  maxResponseBytes?: number;
  rateLimit?: RateLimitOptions;
  circuitBreaker?: BreakerOptions;
}

export interface HttpDeps {
  env: Pick<Env, 'clock' | 'random' | 'http'>;
  auth?: AuthSession;
  limiter?: RateLimiter;
  breaker?: CircuitBreaker;
  /** Defaults to a redactor over the auth session's secrets. */
  redactor?: Redactor;
  signal?: AbortSignal;
}

export type AttemptVerdict = Decision['kind'];

export interface BeforeAttempt {
  attempt: number;
  request: RecordedRequest;
}

export interface AfterAttempt {
  attempt: number;
  response?: RecordedResponse;
  error?: ErrorInfo;
  /** What happens next: retry (after `retryInMs`), refresh-auth, success, allowed, or fail. */
  verdict: AttemptVerdict;
  retryInMs?: number;
  durationMs: number;
}

export interface AttemptHooks {
  beforeAttempt?(info: BeforeAttempt): Promise<void> | void;
  afterAttempt?(info: AfterAttempt): Promise<void> | void;
  /** The circuit breaker refused attempt `attempt` (nothing was sent); a CircuitOpenError follows. */
  refused?(info: { attempt: number; message: string }): Promise<void> | void;
}

/**
 * What an attempt's outcome tells the circuit breaker: 5xx and transport failures count against
 * the endpoint, a 429 or other 4xx says nothing about its health. `at`: the instant a replayed
 * attempt was recorded at (live: now).
 */
export function tellBreaker(breaker: CircuitBreaker, spec: Pick<RequestSpec, 'source' | 'path' | 'allow' | 'circuitBreaker'>, outcome: AttemptOutcome, at?: number): void {
  const endpoint = endpointOf(spec.path);
  const failed =
    (outcome.kind === 'transport' && outcome.code !== 'aborted') ||
    (outcome.kind === 'response' && outcome.status >= 500 && !(spec.allow ?? []).includes(outcome.status));
  if (failed) breaker.recordFailure(spec.source, endpoint, spec.circuitBreaker, at);
  else if (outcome.kind === 'response' && outcome.status < 400) breaker.recordSuccess(spec.source, endpoint, spec.circuitBreaker, at);
  else breaker.recordNeutral(spec.source, endpoint);
}

/**
 * Attempts of this request made before, by a process that crashed (replayed from the log): the
 * live ones continue their count, so the retry budget is the mission's whole, not a fresh one
 * after every crash, and each attempt is classified as it would have been without the crash.
 */
export interface PriorAttempts {
  /** Attempts that were answered. */
  attempts: number;
  /**
   * Of them, the 401s answered by a credential refresh (each adds an attempt to the budget).
   * Whether a refresh went on to exchange the refresh token is not carried: its verdict is
   * logged before the exchange, which a crash may cut short, and the new tokens live only where
   * the credentials keeper put them — so the resumed process may exchange once more.
   */
  refreshes: number;
}

const NO_PRIOR_ATTEMPTS: PriorAttempts = { attempts: 0, refreshes: 0 };

export interface HttpResult {
  status: number;
  /** Lower-cased names, sensitive ones redacted. */
  headers: Record<string, string>;
  /** Parsed JSON (secret values redacted); `null` for an empty body or 204. */
  body: unknown;
  /** The answer had no body (RecordedResponse.empty). */
  empty?: true;
  /** True when the status is not 2xx but listed in `allow`. */
  allowed: boolean;
  attempts: number;
  /** How decoding the answer's bytes lost characters, if it did (the transport's `decodeWarning`, redacted). */
  decodeWarning?: string;
}

/** A body that is not taken as JSON is recorded as its text; `refused` says why when it is JSON. */
type Parsed = { ok: true; value: unknown } | { ok: false; text: string; refused?: string };

const EMPTY_BODY: Parsed = Object.freeze({ ok: true, value: null });

function parseBody(status: number, text: string): Parsed {
  if (status === 204 || status === 205 || status === 304 || isBlank(text)) return EMPTY_BODY;
  try {
    return { ok: true, value: parseJsonInput(text) };
  } catch (err) {
    if (err instanceof JsonDepthError) return { ok: false, text, refused: `its JSON body is nested deeper than ${MAX_JSON_DEPTH} levels, the most a run accepts` };
    if (err instanceof UnloggableValueError) return { ok: false, text, refused: `its JSON body ${err.message.replace(/^the JSON /, '')}` };
    return { ok: false, text };
  }
}

/** `text.trim() === ''` without copying a large body: JSON text almost always starts with `{` or `[`. */
function isBlank(text: string): boolean {
  if (text.length === 0) return true;
  const first = text.charCodeAt(0);
  if (first === 0x7b || first === 0x5b) return false;
  return text.trim() === '';
}

/**
 * Resolved retry policies by the mission's `retry` object: a step asks for the same one on every
 * request, and resolving validates it each time. Resolved policies are frozen, as they are shared.
 */
const policies = new WeakMap<object, RetryPolicy>();
let defaultPolicy: RetryPolicy | undefined;

/** The retry policy a request spec's `retry` resolves to (shared: one object per spec value). */
export function policyOf(retry: RequestSpec['retry']): RetryPolicy {
  if (retry === undefined) return (defaultPolicy ??= Object.freeze(resolveRetryPolicy()));
  let policy = policies.get(retry);
  if (!policy) {
    policy = Object.freeze(resolveRetryPolicy(retry));
    policies.set(retry, policy);
  }
  return policy;
}

/** Header names as the limiter, breaker and retry rules read them; the same object when already lower case. */
function lowerCased(headers: Record<string, string>): Record<string, string> {
  let lower = true;
  for (const k of Object.keys(headers)) {
    if (k !== k.toLowerCase()) {
      lower = false;
      break;
    }
  }
  if (lower) return headers;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) setOwn(out, k.toLowerCase(), v);
  return out;
}

/** The rate limiter's key of a request: its source and endpoint. */
export function limiterKeyOf(spec: Pick<RequestSpec, 'source' | 'path'>): string {
  return `${spec.source}:${endpointOf(spec.path)}`;
}

/** The path without query and fragment: the endpoint part of breaker and limiter keys. */
export function endpointOf(path: string): string {
  const cut = path.search(/[?#]/);
  return cut >= 0 ? path.slice(0, cut) : path;
}

export async function executeRequest(spec: RequestSpec, deps: HttpDeps, hooks: AttemptHooks = {}, prior: PriorAttempts = NO_PRIOR_ATTEMPTS): Promise<HttpResult> {
  try {
    return await attemptUntilDecided(spec, deps, hooks, prior);
  } catch (err) {
    // Only a request body the mission built can be too deep (responses are limited where they
    // enter, far below), and it is redacted before anything is sent: nothing went out.
    if (!(err instanceof RedactionError)) throw err;
    // The base was checked when the request was built, before its body was redacted.
    throw new FetchError({ message: `${spec.method} ${buildUrl(spec.base, spec.path)} was not sent: ${err.message}`, code: 'unrecordable', retryable: false, attempts: 0 });
  }
}

async function attemptUntilDecided(spec: RequestSpec, deps: HttpDeps, hooks: AttemptHooks, prior: PriorAttempts): Promise<HttpResult> {
  const { clock, random, http } = deps.env;
  const policy = policyOf(spec.retry);
  const timeoutMs = policy.timeout ?? spec.sourceTimeout ?? DEFAULT_TIMEOUT_MS;
  const maxResponseBytes = spec.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const redactor = deps.redactor ?? createRedactor(() => deps.auth?.secrets() ?? []);
  const endpoint = endpointOf(spec.path);
  const limiterKey = limiterKeyOf(spec);
  const allow = spec.allow ?? [];
  /** Credential refreshes this request made: each adds an attempt, as the 401 it answered was no failure. */
  let refreshes = prior.refreshes;
  /** Whether one of them exchanged the refresh token (one that adopted another run's tokens leaves room for one that does). */
  let exchanged = false;
  // Whether the request carries an Idempotency-Key cannot change between attempts (only auth
  // values are re-read), so it is looked up once.
  let hasIdempotencyKey: boolean | undefined;

  for (let attempt = prior.attempts + 1; ; attempt++) {
    try {
      deps.breaker?.admit(spec.source, endpoint, spec.circuitBreaker);
    } catch (error) {
      // The breaker's state is the process's, not the log's: its refusal is recorded, so that a
      // replay refuses here too (fetch-step.ts answerPage).
      if (error instanceof CircuitOpenError) await hooks.refused?.({ attempt, message: error.message });
      throw error;
    }
    if (deps.limiter && !deps.limiter.tryAcquire(limiterKey, spec.rateLimit)) await deps.limiter.acquire(limiterKey, spec.rateLimit, deps.signal);

    const material = deps.auth?.material();
    const built = buildRequest({
      method: spec.method,
      base: spec.base,
      path: spec.path,
      sinceQuery: spec.sinceQuery,
      pageQuery: spec.pageQuery,
      authQuery: material?.query,
      sourceHeaders: spec.sourceHeaders,
      sinceHeaders: spec.sinceHeaders,
      authHeaders: material?.headers,
      idempotencyKey: spec.idempotencyKey,
      body: spec.body,
    });
    const request = redactor.request({ method: built.method, url: built.url, headers: built.headers, body: built.bodyValue });
    const shownUrl = request.url;
    // Awaited only when the hook is async: a synchronous hook costs no extra turn of the event loop.
    const announced = hooks.beforeAttempt?.({ attempt, request });
    if (announced) await announced;

    const started = clock.now();
    let outcome: AttemptOutcome;
    let recorded: RecordedResponse | undefined;
    let parsed: Parsed | undefined;
    let redirectNote: string | undefined;
    let redirectedTo: string | undefined;
    let credentialsWithheld = false;
    let decodeWarning: string | undefined;
    try {
      const sent = await sendFollowingRedirects(
        http,
        clock,
        {
          method: built.method,
          url: built.url,
          headers: built.headers,
          ...(built.body !== undefined ? { body: built.body } : {}),
          timeoutMs,
          maxResponseBytes,
          ...(deps.signal ? { signal: deps.signal } : {}),
        },
        Object.keys(material?.headers ?? {}),
        allow,
      );
      const res = sent.response;
      if (sent.redirectedTo !== undefined) redirectedTo = redactor.text(sent.redirectedTo);
      credentialsWithheld = sent.credentialsWithheld === true;
      // Where the answer came from, when not from where the mission asked (helper 84: a login
      // page's HTML, another origin's 401 read as the API's, nothing in the run said so).
      if (sent.note !== undefined) redirectNote = redactor.text(sent.note);
      else if (redirectedTo !== undefined) redirectNote = `the answer came from ${redirectedTo}, where the request was redirected${credentialsWithheld ? " — another origin, to which the source's credentials are not sent" : ''}`;
      if (res.decodeWarning !== undefined) decodeWarning = redactor.text(res.decodeWarning);
      const headers = lowerCased(res.headers);
      parsed = parseBody(res.status, res.body);
      const redacted = redactor.response({ status: res.status, headers, body: parsed.ok ? parsed.value : parsed.text });
      recorded = parsed === EMPTY_BODY ? { ...redacted.recorded, empty: true } : redacted.recorded;
      if (redirectedTo !== undefined) recorded = { ...recorded, redirectedTo };
      if (redacted.replacedInBody > 0) {
        // The run acts on the answer as its log holds it, so the secret is gone from what it stores too: said, never silent.
        const note = `the answer held a credential of the run ${redacted.replacedInBody} time(s); each became ${REDACTED} in the log and in what the run does with the answer (a secret never enters the log)`;
        decodeWarning = decodeWarning === undefined ? note : `${decodeWarning}; ${note}`;
      }
      outcome = { kind: 'response', status: res.status, headers };
      deps.limiter?.observe(limiterKey, res.status, headers, spec.rateLimit);
    } catch (err) {
      if (!(err instanceof TransportError)) throw err;
      // Transports phrase errors as "METHOD URL failed: detail"; keep the detail only.
      const prefix = `${built.method} ${built.url} `;
      const detail = err.message.startsWith(prefix) ? err.message.slice(prefix.length).replace(/^failed: /, '') : err.message;
      const shown = err.code === 'too-large' ? `${detail} (maxResponseBytes of source "${spec.source}" is ${maxResponseBytes})` : detail;
      outcome = { kind: 'transport', code: err.code, message: redactor.text(shown) };
    }
    const finished = clock.now();
    const durationMs = finished - started;

    const decision = classifyAttempt({
      method: built.method,
      outcome,
      attempt,
      policy: refreshes > 0 ? { ...policy, maxAttempts: policy.maxAttempts + refreshes } : policy,
      allow,
      hasIdempotencyKey: (hasIdempotencyKey ??= headerValue(built.headers, 'Idempotency-Key') !== undefined),
      // A 401 from an origin the credentials were not sent to says nothing of them: no refresh.
      canRefresh: !exchanged && refreshes < MAX_REFRESHES && !credentialsWithheld && (deps.auth?.canRefresh() ?? false),
      now: finished,
      random01: random.next(),
    });

    if (deps.breaker) tellBreaker(deps.breaker, spec, outcome);

    // A 2xx to a write whose body is not JSON (`201 Created` as text/plain) still says the write
    // was done: failing it had a later run send the write again, under a key of its own. So the
    // write succeeds and `response` is the body's text, and the run says so.
    if (decision.kind === 'success' && parsed && !parsed.ok && parsed.refused === undefined && built.method !== 'GET' && built.method !== 'HEAD') {
      const contentType = outcome.kind === 'response' ? outcome.headers['content-type'] ?? 'no content type' : '';
      const note = `${built.method} ${shownUrl} returned ${recorded!.status} with a body that is not JSON (${contentType}): the write is done, and \`response\` is the body's text`;
      decodeWarning = decodeWarning === undefined ? note : `${decodeWarning}; ${note}`;
    } else if (decision.kind === 'success' && parsed && !parsed.ok) {
      // A 2xx to a read whose body is not JSON is a failure of the contract, not of the network: not retried.
      const contentType = outcome.kind === 'response' ? outcome.headers['content-type'] ?? 'no content type' : '';
      // Redacted whole, then cut: a credential across the cut would otherwise leave its first characters.
      const snippet = redactor.text(parsed.text).slice(0, 80);
      const problem = parsed.refused ?? `expected a JSON body but got: ${contentType} ${JSON.stringify(snippet)}`;
      const error = new FetchError({
        message: `${built.method} ${shownUrl} returned ${recorded!.status}${redirectedTo !== undefined ? ` (from ${redirectedTo}, where it was redirected)` : ''}: ${problem}`,
        code: 'invalid-body',
        retryable: false,
        attempts: attempt,
        status: recorded!.status,
        response: recorded!,
      });
      await hooks.afterAttempt?.({ attempt, response: recorded, error: infoOf(error), verdict: 'fail', durationMs });
      throw error;
    }

    switch (decision.kind) {
      case 'success':
      case 'allowed': {
        const reported = hooks.afterAttempt?.({ attempt, response: recorded, verdict: decision.kind, durationMs });
        if (reported) await reported;
        return {
          status: recorded!.status,
          headers: recorded!.headers,
          body: recorded!.body,
          ...(recorded!.empty ? { empty: true as const } : {}),
          allowed: decision.kind === 'allowed',
          attempts: attempt,
          ...(decodeWarning !== undefined ? { decodeWarning } : {}),
        };
      }
      case 'retry':
        await hooks.afterAttempt?.({
          attempt,
          verdict: 'retry',
          retryInMs: decision.delayMs,
          durationMs,
          ...(recorded ? { response: recorded } : { error: transportInfo(outcome, built.method, shownUrl) }),
        });
        // A Retry-After the limiter will refuse once the delay is slept fails now.
        deps.limiter?.refuseAt(limiterKey, spec.rateLimit, clock.now() + decision.delayMs);
        await sleepOrAbort(clock, decision.delayMs, deps.signal, attempt, `${built.method} ${shownUrl}`);
        continue;
      case 'refresh-auth': {
        await hooks.afterAttempt?.({ attempt, response: recorded, verdict: 'refresh-auth', retryInMs: 0, durationMs });
        try {
          if ((await deps.auth!.refresh(http, timeoutMs, deps.signal)) === 'exchanged') exchanged = true;
        } catch (err) {
          if (!(err instanceof AuthRefreshError)) throw err;
          throw new FetchError({
            message: `${built.method} ${shownUrl} failed with 401 after ${attempt} attempt${attempt === 1 ? '' : 's'}; ${err.message}`,
            code: 'auth-refresh',
            retryable: false,
            attempts: attempt,
            status: 401,
            ...(recorded ? { response: recorded } : {}),
          });
        }
        refreshes++;
        continue;
      }
      case 'fail': {
        const reason = outcome.kind === 'transport' ? transportReason(outcome) : decision.reason;
        // What the API said, as its log holds it (redacted): "failed with 422" alone sent the user to `reqon events`.
        const answered = outcome.kind === 'response' && recorded ? answerExcerpt(recorded.body) : undefined;
        const error = new FetchError({
          message:
            failureMessage(built.method, shownUrl, reason, attempt, outcome.kind === 'transport' && outcome.code === 'too-large' ? raiseLimitHint(spec.source) : (decision.note ?? redirectNote)) +
            (answered !== undefined ? `; the API answered: ${answered}` : ''),
          code: decision.code,
          retryable: decision.retryable,
          attempts: attempt,
          ...(recorded ? { status: recorded.status, response: recorded } : {}),
        });
        await hooks.afterAttempt?.({
          attempt,
          verdict: 'fail',
          error: infoOf(error),
          durationMs,
          ...(recorded ? { response: recorded } : {}),
        });
        throw error;
      }
      default: {
        const never: never = decision;
        throw new Error(`unhandled decision ${JSON.stringify(never)}`);
      }
    }
  }
}

/** Redirects a GET or HEAD follows, as fetch() does; one more is taken for a loop. */
const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * Sends one attempt. A GET or HEAD answered by a redirect (one the request does not `allow`) goes
 * on to its Location, up to MAX_REDIRECTS hops, as upstream Reqon's fetch() does — without the
 * auth headers, or any header whose name marks a credential, once the Location is on another origin. Other methods are not redirected: their
 * body and Idempotency-Key would go to a URL the mission never named — except by a 303, which
 * asks for a GET of its Location (no body, no key). The answer is the last
 * hop's (recorded under the request as the mission made it); `note` says why a redirect was not
 * followed, for the failure message.
 */
async function sendFollowingRedirects(
  http: HttpTransport,
  clock: Clock,
  request: HttpRequest,
  authHeaderNames: readonly string[],
  allow: readonly number[],
): Promise<{ response: HttpResponse; note?: string; redirectedTo?: string; credentialsWithheld?: boolean }> {
  let current = request;
  // Once a hop left the origin, its credentials stayed behind (below): an answer from there is
  // not the API's word on them (a 401 there asks for no token refresh).
  let withheld = false;
  // Any redirect followed, back to the request's own URL too: the answer is not the first hop's,
  // which an edited `allow` of that 3xx would take instead (verify says so: probe 109 K3).
  let redirected = false;
  const followed = (response: HttpResponse, note?: string) => ({
    response,
    ...(note !== undefined ? { note } : {}),
    ...(redirected ? { redirectedTo: current.url } : {}),
    ...(withheld ? { credentialsWithheld: true } : {}),
  });
  // One timeout for the attempt, redirects included: six hops of 2 s each under `timeout: 3000`
  // took 12 s, each hop given the whole timeout anew (helper 42).
  const deadline = clock.now() + request.timeoutMs;
  for (let hops = 0; ; hops++) {
    const left = Math.ceil(deadline - clock.now());
    if (hops > 0 && left <= 0) {
      throw new TransportError(`${request.method} ${request.url} timed out after ${request.timeoutMs} ms (following ${hops} redirect${hops === 1 ? '' : 's'}, the last to ${current.url})`, 'timeout');
    }
    const response = await http.send(hops === 0 ? current : { ...current, timeoutMs: left });
    if (!REDIRECT_STATUSES.has(response.status) || allow.includes(response.status)) return followed(response);
    const location = headerValue(response.headers, 'location');
    if (location === undefined) return followed(response);
    let next: URL;
    try {
      next = new URL(location, current.url);
    } catch {
      return followed(response, `redirected to ${JSON.stringify(location)}, which is no URL`);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') return followed(response, `redirected to ${location}, which is not http(s)`);
    // 303 See Other: the request was taken, its result is read with a GET of the Location (RFC 9110
    // §15.4.4, as fetch() does) — a new request, so without the body and what described it.
    const seeOther = response.status === 303 && current.method !== 'GET' && current.method !== 'HEAD';
    if (seeOther) {
      const { body: _body, ...rest } = current;
      const dropped = new Set(['content-type', 'content-length', 'idempotency-key']);
      current = { ...rest, method: 'GET', headers: Object.fromEntries(Object.entries(current.headers).filter(([name]) => !dropped.has(name.toLowerCase()))) };
    }
    if (current.method !== 'GET' && current.method !== 'HEAD') {
      return followed(response, `redirected to ${location}, which Reqon follows for GET and HEAD only (a ${current.method}'s body and Idempotency-Key go only where the mission says): point the source or path at the final URL`);
    }
    if (hops >= MAX_REDIRECTS) return followed(response, `more than ${MAX_REDIRECTS} redirects (the last to ${location})`);
    const crossOrigin = next.origin !== new URL(current.url).origin;
    const dropped = new Set(authHeaderNames.map((n) => n.toLowerCase()));
    const kept = ([name]: [string, string]): boolean => !dropped.has(name.toLowerCase()) && !isSensitiveName(name);
    const headers = crossOrigin ? Object.fromEntries(Object.entries(current.headers).filter(kept)) : current.headers;
    if (crossOrigin && Object.keys(headers).length < Object.keys(current.headers).length) withheld = true;
    current = { ...current, url: next.href, headers };
    redirected = true;
  }
}

/** Where to raise the limit a body went over (its message names the limit itself). */
function raiseLimitHint(source: string): string {
  return `raise it with \`maxResponseBytes: N\` in \`source ${source} { … }\` if such bodies are expected`;
}

function transportReason(outcome: Extract<AttemptOutcome, { kind: 'transport' }>): string {
  switch (outcome.code) {
    case 'too-large':
      return outcome.message;
    case 'timeout':
      return 'timed out';
    case 'network':
      return `failed (${outcome.message})`;
    case 'aborted':
      return 'was aborted';
    default: {
      const never: never = outcome.code;
      throw new Error(`unknown transport code ${String(never)}`);
    }
  }
}

function transportInfo(outcome: AttemptOutcome, method: string, url: string): ErrorInfo {
  if (outcome.kind !== 'transport') return { code: 'unknown', message: `${method} ${url} failed`, retryable: true };
  return { code: outcome.code, message: `${method} ${url} ${transportReason(outcome)}`, retryable: true };
}

function infoOf(error: FetchError): ErrorInfo {
  return { code: error.code, message: error.message, retryable: error.retryable };
}

async function sleepOrAbort(
  clock: Pick<Env['clock'], 'sleep'>,
  ms: number,
  signal: AbortSignal | undefined,
  attempts: number,
  what: string,
): Promise<void> {
  try {
    await clock.sleep(ms, signal);
  } catch (error) {
    // Cut short by someone else (a stopping worker): theirs to report, not a failed request.
    if (!signal?.aborted) throw error;
    throw new FetchError({ message: `${what} was aborted while waiting to retry`, code: 'aborted', retryable: false, attempts });
  }
}

/** Longest excerpt of a failed answer's body a failure message carries. */
const ANSWER_EXCERPT_CHARS = 200;

/** A failed answer's body on one line, cut short (undefined when it has none). */
export function answerExcerpt(body: unknown): string | undefined {
  if (body === null || body === undefined) return undefined;
  const text = (typeof body === 'string' ? body : JSON.stringify(body)).replace(/\s+/g, ' ').trim();
  if (text === '') return undefined;
  return text.length > ANSWER_EXCERPT_CHARS ? `${text.slice(0, ANSWER_EXCERPT_CHARS)}…` : text;
}

