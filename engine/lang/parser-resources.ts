/**
 * Declarations of a mission's resources and triggers: `source` (with rateLimit, circuitBreaker,
 * headers, proxy), `store` declarations (with `batch`) and `schedule`. Every option block here
 * rejects unknown keys with E2006 and records the span of each key it accepts.
 */
import type {
  AuthKind, CircuitBreakerConfig, Expr, HeaderEntry, RateLimitConfig, Schedule, ScheduleUnit,
  SourceDecl, StoreDecl, StoreType, StringLiteral,
} from './ast.js';
import { ABORT, didYouMeanWord, listWords, type BlockRules, type Parser } from './parser-core.js';
import { parseExpr } from './parser-expr.js';
import {
  boolValue, enumValue, intValue, numberValue, parseOptionBlock, parseRetryBlock, unknownKey, type OptionSet,
} from './parser-options.js';
import { spanOf } from './ast.js';

const AUTH_KINDS: readonly AuthKind[] = ['oauth2', 'bearer', 'basic', 'api_key', 'none'];

/** `source Name (from "spec.yaml")? { auth, base, headers, validateResponses, rateLimit, circuitBreaker, proxy, timeout, maxResponseBytes }` */
export function parseSource(p: Parser): SourceDecl {
  const start = p.startAt(p.advance());
  const name = p.expectName('a source name');
  const source: SourceDecl = { kind: 'Source', name, headers: [], optionSpans: {}, start, end: p.endFrom(start) };
  if (p.eatWord('from')) source.spec = p.expectString('the path of an OpenAPI document as a string');
  parseOptionBlock(p, SOURCE_OPTIONS, source, source.optionSpans);
  source.end = p.endFrom(start);
  return source;
}

type SourceKey = 'auth' | 'base' | 'headers' | 'validateResponses' | 'rateLimit' | 'circuitBreaker' | 'proxy' | 'timeout' | 'retry' | 'maxResponseBytes';

const SOURCE_OPTIONS: OptionSet<SourceDecl, SourceKey> = {
  context: 'source',
  keys: ['auth', 'base', 'headers', 'validateResponses', 'rateLimit', 'circuitBreaker', 'proxy', 'timeout', 'retry', 'maxResponseBytes'],
  parse(p, key, source) {
    switch (key) {
      case 'auth': {
        const auth = enumValue(p, AUTH_KINDS, 'an auth kind');
        source.auth = { kind: auth.value, start: auth.span.start, end: auth.span.end };
        return;
      }
      case 'base': source.base = p.expectString('a base URL string such as "https://api.example.com"'); return;
      case 'headers': source.headers = parseHeaders(p); return;
      case 'validateResponses': source.validateResponses = boolValue(p); return;
      case 'rateLimit': source.rateLimit = parseRateLimit(p); return;
      case 'circuitBreaker': source.circuitBreaker = parseCircuitBreaker(p); return;
      case 'proxy': source.proxy = parseProxy(p); return;
      case 'timeout': source.timeout = intValue(p, 'a timeout in milliseconds'); return;
      case 'retry': source.retry = parseRetryBlock(p); return;
      case 'maxResponseBytes': source.maxResponseBytes = intValue(p, 'the largest response body in bytes'); return;
      default: unknownKey(key);
    }
  },
};

/** `{ "Header-Name": expr, … }` — header names are strings (they contain dashes). */
function parseHeaders(p: Parser): HeaderEntry[] {
  const headers = p.mark();
  p.parseBlock(HEADERS, undefined);
  return p.take(headers);
}

const HEADERS: BlockRules<undefined> = {
  describe: () => 'the headers',
  item: (p) => {
    const t = p.pos;
    if (p.kind === 'Word' && p.peekKind() === ':') {
      const text = p.textAt(t);
      p.error('E2001', p.spanAt(t), `Expected a header name as a string but found "${text}"`, `write "${text}": …`);
      throw ABORT;
    }
    const name = p.expectString('a header name as a string or "}"');
    p.expect(':');
    const value = parseExpr(p);
    const header: HeaderEntry = { name, value, start: p.startAt(t), end: p.endFrom(p.startAt(t)) };
    p.add(header);
  },
  isItemStart: (p, i) => p.isKeyAt(i),
};

/** One expression, or a bracketed list rotated round-robin. */
function parseProxy(p: Parser): Expr[] {
  if (!p.at('[')) return [parseExpr(p)];
  p.advance();
  const list = p.mark();
  while (!p.at(']')) {
    p.add(parseExpr(p));
    if (p.at(']')) break;
    if (!p.at(',')) p.fail('E2001', '"," or "]"');
    p.advance();
  }
  p.advance();
  return p.take(list);
}

const STRATEGIES = ['pause', 'throttle', 'fail'] as const;

const RATE_LIMIT_OPTIONS: OptionSet<RateLimitConfig, 'strategy' | 'maxWait' | 'fallbackRpm' | 'model'> = {
  context: 'rateLimit',
  keys: ['strategy', 'maxWait', 'fallbackRpm', 'model'],
  insteadOf: {
    requestsPerMinute:
      'to send at most N requests a minute, give the source a local token bucket: `model: { type: tokenBucket, capacity: 1, refill: R }`, R the number N / 60 written out (requests a second: `refill: 1` for 60 a minute, `refill: 0.5` for 30); `fallbackRpm` is the pace `throttle` keeps only while the API sends no rate-limit headers',
  },
  parse(p, key, cfg) {
    switch (key) {
      case 'strategy': cfg.strategy = enumValue(p, STRATEGIES, 'a rate-limit strategy').value; return;
      case 'maxWait': cfg.maxWait = intValue(p, 'a wait in seconds'); return;
      case 'fallbackRpm': cfg.fallbackRpm = intValue(p, 'requests per minute'); return;
      case 'model': cfg.model = parseModel(p); return;
      default: unknownKey(key);
    }
  },
};

function parseRateLimit(p: Parser): RateLimitConfig {
  const cfg: RateLimitConfig = { optionSpans: {}, start: p.startAt(p.pos), end: p.endAt(p.pos) };
  const block = parseOptionBlock(p, RATE_LIMIT_OPTIONS, cfg, cfg.optionSpans);
  cfg.start = block.start;
  cfg.end = block.end;
  return cfg;
}

type ModelOptions = { type?: 'tokenBucket'; capacity?: number; refill?: number; safety?: number };

const MODEL_OPTIONS: OptionSet<ModelOptions, 'type' | 'capacity' | 'refill' | 'safety'> = {
  context: 'model',
  keys: ['type', 'capacity', 'refill', 'safety'],
  parse(p, key, got) {
    switch (key) {
      case 'type': got.type = enumValue(p, ['tokenBucket'] as const, 'a rate-limit model').value; return;
      case 'capacity': got.capacity = numberValue(p); return;
      case 'refill': got.refill = numberValue(p); return;
      case 'safety': got.safety = numberValue(p); return;
      default: unknownKey(key);
    }
  },
};

function parseModel(p: Parser): NonNullable<RateLimitConfig['model']> {
  const start = p.start;
  const got: ModelOptions = {};
  const span = parseOptionBlock(p, MODEL_OPTIONS, got, {});
  for (const key of ['type', 'capacity', 'refill'] as const) {
    if (got[key] === undefined) {
      p.error('E2017', { start, end: start + 1 }, `Missing option \`${key}\` in the rate-limit model`, 'write `model: { type: tokenBucket, capacity: 10, refill: 5 }`');
      throw ABORT;
    }
  }
  const model: NonNullable<RateLimitConfig['model']> = { type: 'tokenBucket', capacity: got.capacity!, refill: got.refill!, start: span.start, end: span.end };
  if (got.safety !== undefined) model.safety = got.safety;
  return model;
}

type BreakerKey = 'failureThreshold' | 'resetTimeout' | 'successThreshold' | 'failureWindow' | 'failureRate' | 'minimumRequests';

const BREAKER_OPTIONS: OptionSet<CircuitBreakerConfig, BreakerKey> = {
  context: 'circuitBreaker',
  keys: ['failureThreshold', 'resetTimeout', 'successThreshold', 'failureWindow', 'failureRate', 'minimumRequests'],
  parse(p, key, cfg) {
    switch (key) {
      case 'failureThreshold': cfg.failureThreshold = intValue(p); return;
      case 'resetTimeout': cfg.resetTimeout = intValue(p); return;
      case 'successThreshold': cfg.successThreshold = intValue(p); return;
      case 'failureWindow': cfg.failureWindow = intValue(p); return;
      case 'failureRate': cfg.failureRate = numberValue(p); return;
      case 'minimumRequests': cfg.minimumRequests = intValue(p); return;
      default: unknownKey(key);
    }
  },
};

function parseCircuitBreaker(p: Parser): CircuitBreakerConfig {
  const cfg: CircuitBreakerConfig = { optionSpans: {}, start: p.startAt(p.pos), end: p.endAt(p.pos) };
  const block = parseOptionBlock(p, BREAKER_OPTIONS, cfg, cfg.optionSpans);
  cfg.start = block.start;
  cfg.end = block.end;
  return cfg;
}

const STORE_TYPES: readonly StoreType[] = ['memory', 'file', 'sql', 'nosql', 'postgrest'];

/** `store name: type("target") { batch: N | { size, maxDelay, durability } }?` */
export function parseStoreDecl(p: Parser): StoreDecl {
  const start = p.startAt(p.advance());
  const name = p.expectName('a store name');
  p.expect(':', `write \`store ${name.name}: memory("${name.name}")\``);
  const type = enumValue(p, STORE_TYPES, 'a store type');
  p.expect('(', `write \`${type.value}("${name.name}")\``);
  const target = p.expectString('the table, collection or file name as a string');
  p.expect(')');
  const store: StoreDecl = { kind: 'Store', name, type: { kind: type.value, start: type.span.start, end: type.span.end }, target, start, end: p.endFrom(start) };
  if (p.at('{')) parseOptionBlock(p, STORE_DECL_OPTIONS, store, {});
  store.end = p.endFrom(start);
  return store;
}

const STORE_DECL_OPTIONS: OptionSet<StoreDecl, 'batch'> = {
  context: 'store',
  keys: ['batch'],
  parse(p, key, store) {
    switch (key) {
      case 'batch': store.batch = parseBatch(p); return;
      default: unknownKey(key);
    }
  },
};

type BatchOptions = { size?: number; maxDelay?: number; durability?: 'strict' | 'relaxed' };

const BATCH_OPTIONS: OptionSet<BatchOptions, 'size' | 'maxDelay' | 'durability'> = {
  context: 'batch',
  keys: ['size', 'maxDelay', 'durability'],
  parse(p, key, got) {
    switch (key) {
      case 'size': got.size = intValue(p, 'a batch size'); return;
      case 'maxDelay': got.maxDelay = intValue(p, 'a delay in milliseconds'); return;
      case 'durability': got.durability = enumValue(p, ['strict', 'relaxed'] as const, 'a durability').value; return;
      default: unknownKey(key);
    }
  },
};

function parseBatch(p: Parser): NonNullable<StoreDecl['batch']> {
  const t = p.pos;
  if (p.kind === 'Number') return { size: intValue(p, 'a batch size'), start: p.startAt(t), end: p.endAt(t) };
  const got: BatchOptions = {};
  const span = parseOptionBlock(p, BATCH_OPTIONS, got, {});
  if (got.size === undefined) {
    p.error('E2017', p.spanAt(t), 'Missing option `size` in `batch`', 'write `batch: { size: 100 }`');
    throw ABORT;
  }
  const batch: NonNullable<StoreDecl['batch']> = { size: got.size, start: span.start, end: span.end };
  if (got.maxDelay !== undefined) batch.maxDelay = got.maxDelay;
  if (got.durability !== undefined) batch.durability = got.durability;
  return batch;
}

const UNITS: readonly ScheduleUnit[] = ['seconds', 'minutes', 'hours', 'days', 'weeks'];

/** `schedule: every N unit | cron "…" | at "…"`, then `{ timezone, maxConcurrency, skipIfRunning, retry }`. */
export function parseSchedule(p: Parser): Schedule {
  const start = p.startAt(p.advance());
  p.expect(':', 'write `schedule: every 6 hours`');
  const t = p.pos;
  const tStart = p.startAt(t);
  let trigger: Schedule['trigger'];
  if (p.eatWord('every')) {
    const amountTok = p.pos;
    const amount = intValue(p, 'a whole number of time units');
    if (amount < 1) p.error('E2013', p.spanAt(amountTok), 'Expected a positive interval but found "0"');
    trigger = { kind: 'every', amount, unit: parseUnit(p), start: tStart, end: p.endFrom(tStart) };
  } else if (p.eatWord('cron')) {
    trigger = { kind: 'cron', expression: p.expectString('a cron expression string such as "0 * * * *"'), start: tStart, end: p.endFrom(tStart) };
  } else if (p.eatWord('at')) {
    trigger = { kind: 'at', when: utcSuffix(p.expectString('a date-time string')), start: tStart, end: p.endFrom(tStart) };
  } else {
    const help = p.kindAt(t) === 'Word' ? didYouMeanWord(p.textAt(t), ['every', 'cron', 'at']) : undefined;
    p.error('E2007', p.spanAt(t), `Expected a schedule (\`every N unit\`, \`cron "…"\`, \`at "…"\`) but found ${p.describe(t)}`, help);
    throw ABORT;
  }
  const schedule: Schedule = { kind: 'Schedule', trigger, optionSpans: {}, start, end: p.endFrom(start) };
  if (p.at('{')) {
    parseOptionBlock(p, SCHEDULE_OPTIONS, schedule, schedule.optionSpans);
  }
  schedule.end = p.endFrom(start);
  return schedule;
}

function parseUnit(p: Parser): ScheduleUnit {
  const t = p.pos;
  if (p.kind === 'Word') {
    const text = p.textAt(t);
    if ((UNITS as readonly string[]).includes(text)) {
      p.advance();
      return text as ScheduleUnit;
    }
    // `every 1 hour` (upstream's docs): a singular unit is its plural, so the tree is the same.
    const plural = `${text}s`;
    if ((UNITS as readonly string[]).includes(plural)) {
      p.advance();
      return plural as ScheduleUnit;
    }
    p.error('E2009', p.spanAt(t), `Unknown schedule unit \`${text}\``, didYouMeanWord(text, UNITS) ?? `units: ${listWords(UNITS)}`);
    throw ABORT;
  }
  return p.fail('E2009', `a time unit (${listWords(UNITS)})`);
}

function parseScheduleRetry(p: Parser): NonNullable<Schedule['retry']> {
  const retry: NonNullable<Schedule['retry']> = { start: p.startAt(p.pos), end: p.endAt(p.pos) };
  const block = parseOptionBlock(p, SCHEDULE_RETRY_OPTIONS, retry, {});
  retry.start = block.start;
  retry.end = block.end;
  return retry;
}

/** The options a `schedule:` takes in its `{ … }` (a mission item that is one of these is a misplaced schedule option). */
export const SCHEDULE_OPTION_KEYS = ['timezone', 'maxConcurrency', 'skipIfRunning', 'retry'] as const;

/** A schedule retries a failed firing with `retry`; upstream's README writes `retryOnFailure: 3`. */
export const RETRY_ON_FAILURE_HELP = 'a schedule retries a failed run with its `retry` option: `schedule: cron "0 6 * * *" { retry: { maxRetries: 3, delaySeconds: 60 } }`';

const SCHEDULE_OPTIONS: OptionSet<Schedule, (typeof SCHEDULE_OPTION_KEYS)[number]> = {
  context: 'schedule',
  keys: SCHEDULE_OPTION_KEYS,
  insteadOf: { retryOnFailure: RETRY_ON_FAILURE_HELP },
  parse(p, key, schedule) {
    switch (key) {
      case 'timezone': schedule.timezone = p.expectString('a time zone string such as "UTC"'); return;
      case 'maxConcurrency': schedule.maxConcurrency = intValue(p); return;
      case 'skipIfRunning': schedule.skipIfRunning = boolValue(p); return;
      case 'retry': schedule.retry = parseScheduleRetry(p); return;
      default: unknownKey(key);
    }
  },
};

const SCHEDULE_RETRY_OPTIONS: OptionSet<NonNullable<Schedule['retry']>, 'maxRetries' | 'delaySeconds'> = {
  context: 'schedule retry',
  keys: ['maxRetries', 'delaySeconds'],
  parse(p, key, retry) {
    switch (key) {
      case 'maxRetries': retry.maxRetries = intValue(p); return;
      case 'delaySeconds': retry.delaySeconds = intValue(p, 'a delay in seconds'); return;
      default: unknownKey(key);
    }
  },
};

/**
 * `at "2024-12-25 00:00 UTC"` (upstream's docs write the zone as a word) is the instant with `Z`:
 * the literal's value becomes `2024-12-25 00:00Z`, which the checker and the scheduler read.
 */
function utcSuffix(when: StringLiteral): StringLiteral {
  const m = /^(.*\d)\s+UTC$/.exec(when.value);
  return m ? { value: `${m[1]}Z`, start: when.start, end: when.end } : when;
}
