/**
 * Declarations of a mission's resources and triggers: `source` (with rateLimit, circuitBreaker,
 * headers, proxy), `store` declarations (with `batch`) and `schedule`. Every option block here
 * rejects unknown keys with E2006 and records the span of each key it accepts.
 */
import type {
  AuthKind, CircuitBreakerConfig, Expr, HeaderEntry, RateLimitConfig, Schedule, ScheduleUnit,
  SourceDecl, StoreDecl, StoreType,
} from './ast.js';
import { ABORT, didYouMeanWord, listWords, type Parser } from './parser-core.js';
import { parseExpr } from './parser-expr.js';
import { boolValue, enumValue, intValue, numberValue, parseOptionBlock } from './parser-options.js';
import { describeToken } from './token.js';

const AUTH_KINDS: readonly AuthKind[] = ['oauth2', 'bearer', 'basic', 'api_key', 'none'];

/** `source Name (from "spec.yaml")? { auth, base, headers, validateResponses, rateLimit, circuitBreaker, proxy, timeout }` */
export function parseSource(p: Parser): SourceDecl {
  const start = p.advance().span.start;
  const name = p.expectName('a source name');
  const source: SourceDecl = { kind: 'Source', name, headers: [], optionSpans: {}, span: p.span(start) };
  if (p.eatWord('from')) source.spec = p.expectString('the path of an OpenAPI document as a string');
  parseOptionBlock(
    p,
    'source',
    {
      auth: () => {
        const auth = enumValue(p, AUTH_KINDS, 'an auth kind');
        source.auth = { kind: auth.value, span: auth.span };
      },
      base: () => (source.base = p.expectString('a base URL string such as "https://api.example.com"')),
      headers: () => (source.headers = parseHeaders(p)),
      validateResponses: () => (source.validateResponses = boolValue(p)),
      rateLimit: () => (source.rateLimit = parseRateLimit(p)),
      circuitBreaker: () => (source.circuitBreaker = parseCircuitBreaker(p)),
      proxy: () => (source.proxy = parseProxy(p)),
      timeout: () => (source.timeout = intValue(p, 'a timeout in milliseconds')),
    },
    source.optionSpans,
  );
  source.span = p.span(start);
  return source;
}

/** `{ "Header-Name": expr, … }` — header names are strings (they contain dashes). */
function parseHeaders(p: Parser): HeaderEntry[] {
  const headers: HeaderEntry[] = [];
  p.parseBlock(
    'the headers',
    () => {
      const t = p.tok;
      if (t.kind === 'Word' && p.peek().kind === ':') {
        p.error('E2001', t.span, `Expected a header name as a string but found "${t.text}"`, `write "${t.text}": …`);
        throw ABORT;
      }
      const name = p.expectString('a header name as a string or "}"');
      p.expect(':');
      const value = parseExpr(p);
      headers.push({ name, value, span: p.span(t.span.start) });
    },
    (i) => p.isKeyAt(i),
  );
  return headers;
}

/** One expression, or a bracketed list rotated round-robin. */
function parseProxy(p: Parser): Expr[] {
  if (!p.at('[')) return [parseExpr(p)];
  p.advance();
  const list: Expr[] = [];
  while (!p.at(']')) {
    list.push(parseExpr(p));
    if (p.at(']')) break;
    if (!p.at(',')) p.fail('E2001', '"," or "]"');
    p.advance();
  }
  p.advance();
  return list;
}

const STRATEGIES = ['pause', 'throttle', 'fail'] as const;

function parseRateLimit(p: Parser): RateLimitConfig {
  const cfg: RateLimitConfig = { optionSpans: {}, span: p.tok.span };
  cfg.span = parseOptionBlock(
    p,
    'rateLimit',
    {
      strategy: () => (cfg.strategy = enumValue(p, STRATEGIES, 'a rate-limit strategy').value),
      maxWait: () => (cfg.maxWait = intValue(p, 'a wait in seconds')),
      fallbackRpm: () => (cfg.fallbackRpm = intValue(p, 'requests per minute')),
      model: () => (cfg.model = parseModel(p)),
    },
    cfg.optionSpans,
  );
  return cfg;
}

function parseModel(p: Parser): NonNullable<RateLimitConfig['model']> {
  const start = p.tok.span.start;
  const got: { type?: 'tokenBucket'; capacity?: number; refill?: number; safety?: number } = {};
  const span = parseOptionBlock(
    p,
    'model',
    {
      type: () => (got.type = enumValue(p, ['tokenBucket'] as const, 'a rate-limit model').value),
      capacity: () => (got.capacity = numberValue(p)),
      refill: () => (got.refill = numberValue(p)),
      safety: () => (got.safety = numberValue(p)),
    },
    {},
  );
  for (const key of ['type', 'capacity', 'refill'] as const) {
    if (got[key] === undefined) {
      p.error('E2017', { start, end: start + 1 }, `Missing option \`${key}\` in the rate-limit model`, 'write `model: { type: tokenBucket, capacity: 10, refill: 5 }`');
      throw ABORT;
    }
  }
  const model: NonNullable<RateLimitConfig['model']> = { type: 'tokenBucket', capacity: got.capacity!, refill: got.refill!, span };
  if (got.safety !== undefined) model.safety = got.safety;
  return model;
}

function parseCircuitBreaker(p: Parser): CircuitBreakerConfig {
  const cfg: CircuitBreakerConfig = { optionSpans: {}, span: p.tok.span };
  cfg.span = parseOptionBlock(
    p,
    'circuitBreaker',
    {
      failureThreshold: () => (cfg.failureThreshold = intValue(p)),
      resetTimeout: () => (cfg.resetTimeout = intValue(p)),
      successThreshold: () => (cfg.successThreshold = intValue(p)),
      failureWindow: () => (cfg.failureWindow = intValue(p)),
      failureRate: () => (cfg.failureRate = numberValue(p)),
      minimumRequests: () => (cfg.minimumRequests = intValue(p)),
    },
    cfg.optionSpans,
  );
  return cfg;
}

const STORE_TYPES: readonly StoreType[] = ['memory', 'file', 'sql', 'nosql', 'postgrest'];

/** `store name: type("target") { batch: N | { size, maxDelay, durability } }?` */
export function parseStoreDecl(p: Parser): StoreDecl {
  const start = p.advance().span.start;
  const name = p.expectName('a store name');
  p.expect(':', `write \`store ${name.name}: memory("${name.name}")\``);
  const type = enumValue(p, STORE_TYPES, 'a store type');
  p.expect('(', `write \`${type.value}("${name.name}")\``);
  const target = p.expectString('the table, collection or file name as a string');
  p.expect(')');
  const store: StoreDecl = { kind: 'Store', name, type: { kind: type.value, span: type.span }, target, span: p.span(start) };
  if (p.at('{')) {
    parseOptionBlock(p, 'store', { batch: () => (store.batch = parseBatch(p)) }, {});
  }
  store.span = p.span(start);
  return store;
}

function parseBatch(p: Parser): NonNullable<StoreDecl['batch']> {
  const t = p.tok;
  if (t.kind === 'Number') return { size: intValue(p, 'a batch size'), span: t.span };
  const got: { size?: number; maxDelay?: number; durability?: 'strict' | 'relaxed' } = {};
  const span = parseOptionBlock(
    p,
    'batch',
    {
      size: () => (got.size = intValue(p, 'a batch size')),
      maxDelay: () => (got.maxDelay = intValue(p, 'a delay in milliseconds')),
      durability: () => (got.durability = enumValue(p, ['strict', 'relaxed'] as const, 'a durability').value),
    },
    {},
  );
  if (got.size === undefined) {
    p.error('E2017', t.span, 'Missing option `size` in `batch`', 'write `batch: { size: 100 }`');
    throw ABORT;
  }
  const batch: NonNullable<StoreDecl['batch']> = { size: got.size, span };
  if (got.maxDelay !== undefined) batch.maxDelay = got.maxDelay;
  if (got.durability !== undefined) batch.durability = got.durability;
  return batch;
}

const UNITS: readonly ScheduleUnit[] = ['seconds', 'minutes', 'hours', 'days', 'weeks'];

/** `schedule: every N unit | cron "…" | at "…"`, then `{ timezone, maxConcurrency, skipIfRunning, retry }`. */
export function parseSchedule(p: Parser): Schedule {
  const start = p.advance().span.start;
  p.expect(':', 'write `schedule: every 6 hours`');
  const t = p.tok;
  let trigger: Schedule['trigger'];
  if (p.eatWord('every')) {
    const amountTok = p.tok;
    const amount = intValue(p, 'a whole number of time units');
    if (amount < 1) p.error('E2013', amountTok.span, 'Expected a positive interval but found "0"');
    trigger = { kind: 'every', amount, unit: parseUnit(p), span: p.span(t.span.start) };
  } else if (p.eatWord('cron')) {
    trigger = { kind: 'cron', expression: p.expectString('a cron expression string such as "0 * * * *"'), span: p.span(t.span.start) };
  } else if (p.eatWord('at')) {
    trigger = { kind: 'at', when: p.expectString('a date-time string'), span: p.span(t.span.start) };
  } else {
    const help = t.kind === 'Word' ? didYouMeanWord(t.text, ['every', 'cron', 'at']) : undefined;
    p.error('E2007', t.span, `Expected a schedule (\`every N unit\`, \`cron "…"\`, \`at "…"\`) but found ${describeToken(t)}`, help);
    throw ABORT;
  }
  const schedule: Schedule = { kind: 'Schedule', trigger, optionSpans: {}, span: p.span(start) };
  if (p.at('{')) {
    parseOptionBlock(
      p,
      'schedule',
      {
        timezone: () => (schedule.timezone = p.expectString('a time zone string such as "UTC"')),
        maxConcurrency: () => (schedule.maxConcurrency = intValue(p)),
        skipIfRunning: () => (schedule.skipIfRunning = boolValue(p)),
        retry: () => (schedule.retry = parseScheduleRetry(p)),
      },
      schedule.optionSpans,
    );
  }
  schedule.span = p.span(start);
  return schedule;
}

function parseUnit(p: Parser): ScheduleUnit {
  const t = p.tok;
  if (t.kind === 'Word') {
    if ((UNITS as readonly string[]).includes(t.text)) {
      p.advance();
      return t.text as ScheduleUnit;
    }
    const plural = `${t.text}s`;
    if ((UNITS as readonly string[]).includes(plural)) {
      p.error('E2009', t.span, `Expected a plural time unit but found "${t.text}"`, `write \`${plural}\``);
      throw ABORT;
    }
    p.error('E2009', t.span, `Unknown schedule unit \`${t.text}\``, didYouMeanWord(t.text, UNITS) ?? `units: ${listWords(UNITS)}`);
    throw ABORT;
  }
  return p.fail('E2009', `a time unit (${listWords(UNITS)})`);
}

function parseScheduleRetry(p: Parser): NonNullable<Schedule['retry']> {
  const retry: NonNullable<Schedule['retry']> = { span: p.tok.span };
  retry.span = parseOptionBlock(
    p,
    'schedule retry',
    {
      maxRetries: () => (retry.maxRetries = intValue(p)),
      delaySeconds: () => (retry.delaySeconds = intValue(p, 'a delay in seconds')),
    },
    {},
  );
  return retry;
}
