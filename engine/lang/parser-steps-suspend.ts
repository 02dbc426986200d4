/**
 * The steps that suspend a run: `wait { … }` (webhook callbacks) and `pause { … }` (a durable
 * timer and/or webhook trigger). Durations are normalised to milliseconds here, so the runtime
 * never re-parses "1.5h"; an unparseable duration is E2010 at the string.
 */
import type { Expr, Name, PauseStep, PauseTrigger, Span, WaitStep } from './ast.js';
import { ABORT, didYouMeanWord, type Parser } from './parser-core.js';
import { parseExpr } from './parser-expr.js';
import { intValue, parseOptionBlock, parseRetryBlock, unknownKey, type OptionSet } from './parser-options.js';
import { optionSpan, spanOf } from './ast.js';
import { DURATION_FUNCTION_MS } from './builtin-names.js';

export function parseWait(p: Parser): WaitStep {
  const start = p.startAt(p.advance());
  const step: WaitStep = { kind: 'Wait', optionSpans: {}, start, end: p.endFrom(start) };
  parseOptionBlock(p, WAIT_OPTIONS, step, step.optionSpans);
  step.end = p.endFrom(start);
  return step;
}

type WaitKey = 'timeout' | 'path' | 'expectedEvents' | 'eventFilter' | 'retry' | 'retryOnTimeout' | 'storage';

const WAIT_OPTIONS: OptionSet<WaitStep, WaitKey> = {
  context: 'wait',
  keys: ['timeout', 'path', 'expectedEvents', 'eventFilter', 'retry', 'retryOnTimeout', 'storage'],
  parse(p, key, step) {
    switch (key) {
      case 'timeout': {
        const t = p.pos;
        step.timeout = durationCall(p) ?? intValue(p, 'a timeout in milliseconds (or `minutes(5)`, `hours(1)` …)');
        refuseComputedDuration(p, t, 'a wait\'s `timeout`');
        return;
      }
      case 'path': step.path = p.expectString('a webhook path string such as "/hooks/done"'); return;
      case 'expectedEvents':
        step.expectedEvents = intValue(p, 'a number of events', p.at('[') || p.at('String') ? 'a wait counts its events; to take only some kinds, filter them: `eventFilter: .type in ["payment.success", "payment.failed"]`' : undefined);
        return;
      case 'eventFilter': step.eventFilter = parseExpr(p); return;
      // Upstream's docs name the wait's retry `retryOnTimeout`: it is the same option (a timeout
      // with no event retries the action), so one of the two only.
      case 'retry':
      case 'retryOnTimeout': {
        const other = key === 'retry' ? 'retryOnTimeout' : 'retry';
        if (Object.hasOwn(step.optionSpans, other)) p.error('E2014', optionSpan(step.optionSpans, key)!, `\`${key}\` and \`${other}\` are the same option, given twice`, 'keep one of them');
        step.retry = parseRetryBlock(p);
        return;
      }
      case 'storage': step.storage = p.at('{') ? parseStorage(p) : storageShorthand(p); return;
      default: unknownKey(key);
    }
  },
};

/** `storage: events` (upstream's shorthand) is `storage: { target: events }`: keyed by event id. */
function storageShorthand(p: Parser): NonNullable<WaitStep['storage']> {
  const target = p.expectName('a store name or `{ target: store, key: … }`');
  return { target, start: target.start, end: target.end };
}

type StorageOptions = { target?: Name; key?: Expr };

const STORAGE_OPTIONS: OptionSet<StorageOptions, 'target' | 'key'> = {
  context: 'storage',
  keys: ['target', 'key'],
  parse(p, key, got) {
    switch (key) {
      case 'target': got.target = p.expectName('a store name'); return;
      case 'key': got.key = parseExpr(p); return;
      default: unknownKey(key);
    }
  },
};

function parseStorage(p: Parser): NonNullable<WaitStep['storage']> {
  const start = p.start;
  const got: StorageOptions = {};
  const blockSpan = parseOptionBlock(p, STORAGE_OPTIONS, got, {});
  const { target, key } = got;
  if (target === undefined) {
    p.error('E2017', { start, end: start + 1 }, 'Missing option `target` in `storage`', 'write `storage: { target: storeName }`');
    throw ABORT;
  }
  const storage: NonNullable<WaitStep['storage']> = { target, start: blockSpan.start, end: blockSpan.end };
  if (key !== undefined) storage.key = key;
  return storage;
}

export function parsePause(p: Parser): PauseStep {
  const start = p.startAt(p.advance());
  const step: PauseStep = { kind: 'Pause', resumeOn: [], optionSpans: {}, start, end: p.endFrom(start) };
  parseOptionBlock(p, PAUSE_OPTIONS, step, step.optionSpans);
  step.end = p.endFrom(start);
  return step;
}

const PAUSE_OPTIONS: OptionSet<PauseStep, 'duration' | 'persist' | 'resumeOn'> = {
  context: 'pause',
  keys: ['duration', 'persist', 'resumeOn'],
  parse(p, key, step) {
    switch (key) {
      case 'duration': {
        const t = p.pos;
        step.duration = parseDuration(p);
        refuseComputedDuration(p, t, 'a pause\'s `duration`');
        return;
      }
      case 'persist': step.persist = p.expectName('a store name'); return;
      case 'resumeOn': step.resumeOn = parseTriggers(p); return;
      default: unknownKey(key);
    }
  },
};

/** Operators that would go on to compute a duration. */
const COMPUTING = new Set(['+', '-', '*', '/', '%']);

/**
 * A duration fixed when the mission is checked is one value: `hours(1) + minutes(30)` stopped at
 * its `+` with "Expected a pause option name", which said nothing of the duration.
 */
function refuseComputedDuration(p: Parser, first: number, what: string): void {
  if (!COMPUTING.has(p.kind)) return;
  p.error(
    'E2010',
    { start: p.startAt(first), end: p.endAt(p.pos) },
    `${what[0]!.toUpperCase()}${what.slice(1)} is one value, fixed when the mission is checked: it cannot be computed (found "${p.kind}")`,
    'write it as one value: milliseconds (`5400000`), a string with a unit (`"1.5h"`, `"90m"`) or one call (`minutes(90)`)',
  );
  throw ABORT;
}

function parseDuration(p: Parser): { ms: number; start: number; end: number } {
  const t = p.pos;
  const kind = p.kind;
  if (kind === 'Number' && Number.isInteger(p.numberAt(t)) && !p.hasDot(t)) {
    p.advance();
    return { ms: p.numberAt(t), start: p.startAt(t), end: p.endAt(t) };
  }
  if (kind === 'String') {
    p.advance();
    const ms = parseDurationText(p.valueAt(t));
    if (ms === undefined) {
      p.error('E2010', p.spanAt(t), `Invalid duration ${p.textAt(t)}`, 'write milliseconds (`5000`) or a number with a unit ms, s, m, h or d: "30s", "12h", "1.5h", "7d"');
      throw ABORT;
    }
    return { ms, start: p.startAt(t), end: p.endAt(t) };
  }
  const ms = durationCall(p);
  if (ms !== undefined) return { ms, start: p.startAt(t), end: p.prevEnd };
  return p.fail('E2010', 'a duration (milliseconds or a string such as "7d")');
}

/**
 * `days(2)`, `hours(1.5)`, `minutes(30)`, `seconds(10)` where a duration is fixed when the
 * mission is checked (DURATION_FUNCTION_MS): its milliseconds, rounded; undefined, consuming
 * nothing, at anything else. The argument must be a number as written.
 */
export function durationCall(p: Parser): number | undefined {
  const t = p.pos;
  if (p.kind !== 'Word' || p.peekKind() !== '(') return undefined;
  const name = p.textAt(t);
  const unit = Object.hasOwn(DURATION_FUNCTION_MS, name) ? DURATION_FUNCTION_MS[name as keyof typeof DURATION_FUNCTION_MS] : undefined;
  if (unit === undefined) return undefined;
  p.advance();
  p.advance();
  if (!p.at('Number')) p.fail('E2010', `a number in \`${name}(…)\``, `this duration is fixed when the mission is checked: write \`${name}(2)\`, or a string such as "2d"`);
  const n = p.numberAt(p.advance());
  p.expect(')');
  return Math.round(n * unit);
}

/** `timeout | webhook "/path" | …` */
function parseTriggers(p: Parser): PauseTrigger[] {
  const triggers = p.mark();
  do {
    const t = p.pos;
    if (p.atWord('timeout')) {
      p.advance();
      const trigger: PauseTrigger = { kind: 'timeout', start: p.startAt(t), end: p.endAt(t) };
      p.add(trigger);
    } else if (p.atWord('webhook')) {
      p.advance();
      const path = p.expectString('a webhook path string such as "/approved"');
      const trigger: PauseTrigger = { kind: 'webhook', path, start: p.startAt(t), end: p.endFrom(p.startAt(t)) };
      p.add(trigger);
    } else {
      const help = p.kind === 'Word' ? didYouMeanWord(p.textAt(t), ['timeout', 'webhook']) : undefined;
      p.error('E2007', p.spanAt(t), `Expected a resume trigger (\`timeout\`, \`webhook "/path"\`) but found ${p.describe(t)}`, help);
      throw ABORT;
    }
  } while (p.eat('|'));
  return p.take(triggers);
}

/**
 * A pause duration: an integer of milliseconds, or `"<number><unit>"` with unit ms, s, m, h or d
 * (any case, optional spaces, fractions allowed; no unit means ms). Returns ms, or undefined.
 */
export function parseDurationText(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h|d)?\s*$/i.exec(text);
  if (m === null) return undefined;
  const unit = (m[2] ?? 'ms').toLowerCase();
  const factor = unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : unit === 'h' ? 3_600_000 : 86_400_000;
  return Math.round(parseFloat(m[1]!) * factor);
}
