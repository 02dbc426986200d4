/**
 * The steps that suspend a run: `wait { … }` (webhook callbacks) and `pause { … }` (a durable
 * timer and/or webhook trigger). Durations are normalised to milliseconds here, so the runtime
 * never re-parses "1.5h"; an unparseable duration is E2010 at the string.
 */
import type { Name, PauseStep, PauseTrigger, Span, WaitStep } from './ast.js';
import { ABORT, didYouMeanWord, type Parser } from './parser-core.js';
import { parseExpr } from './parser-expr.js';
import { intValue, parseOptionBlock, parseRetryBlock } from './parser-options.js';
import { describeToken } from './token.js';

export function parseWait(p: Parser): WaitStep {
  const start = p.advance().span.start;
  const step: WaitStep = { kind: 'Wait', optionSpans: {}, span: p.span(start) };
  parseOptionBlock(
    p,
    'wait',
    {
      timeout: () => (step.timeout = intValue(p, 'a timeout in milliseconds')),
      path: () => (step.path = p.expectString('a webhook path string such as "/hooks/done"')),
      expectedEvents: () => (step.expectedEvents = intValue(p)),
      eventFilter: () => (step.eventFilter = parseExpr(p)),
      retry: () => (step.retry = parseRetryBlock(p)),
      storage: () => (step.storage = parseStorage(p)),
    },
    step.optionSpans,
  );
  step.span = p.span(start);
  return step;
}

function parseStorage(p: Parser): NonNullable<WaitStep['storage']> {
  const start = p.tok.span.start;
  let target: Name | undefined;
  let key: WaitStep['eventFilter'];
  const spans = {};
  const blockSpan = parseOptionBlock(
    p,
    'storage',
    {
      target: () => (target = p.expectName('a store name')),
      key: () => (key = parseExpr(p)),
    },
    spans,
  );
  if (target === undefined) {
    p.error('E2017', { start, end: start + 1 }, 'Missing option `target` in `storage`', 'write `storage: { target: storeName }`');
    throw ABORT;
  }
  const storage: NonNullable<WaitStep['storage']> = { target, span: blockSpan };
  if (key !== undefined) storage.key = key;
  return storage;
}

export function parsePause(p: Parser): PauseStep {
  const start = p.advance().span.start;
  const step: PauseStep = { kind: 'Pause', resumeOn: [], optionSpans: {}, span: p.span(start) };
  parseOptionBlock(
    p,
    'pause',
    {
      duration: () => (step.duration = parseDuration(p)),
      persist: () => (step.persist = p.expectName('a store name')),
      resumeOn: () => (step.resumeOn = parseTriggers(p)),
    },
    step.optionSpans,
  );
  step.span = p.span(start);
  return step;
}

function parseDuration(p: Parser): { ms: number; span: Span } {
  const t = p.tok;
  if (t.kind === 'Number' && Number.isInteger(t.number) && !t.text.includes('.')) {
    p.advance();
    return { ms: t.number, span: t.span };
  }
  if (t.kind === 'String') {
    p.advance();
    const ms = parseDurationText(t.value);
    if (ms === undefined) {
      p.error('E2010', t.span, `Invalid duration ${t.text}`, 'write milliseconds (`5000`) or a number with a unit ms, s, m, h or d: "30s", "12h", "1.5h", "7d"');
      throw ABORT;
    }
    return { ms, span: t.span };
  }
  return p.fail('E2010', 'a duration (milliseconds or a string such as "7d")');
}

/** `timeout | webhook "/path" | …` */
function parseTriggers(p: Parser): PauseTrigger[] {
  const triggers: PauseTrigger[] = [];
  do {
    const t = p.tok;
    if (t.kind === 'Word' && t.text === 'timeout') {
      p.advance();
      triggers.push({ kind: 'timeout', span: t.span });
    } else if (t.kind === 'Word' && t.text === 'webhook') {
      p.advance();
      const path = p.expectString('a webhook path string such as "/approved"');
      triggers.push({ kind: 'webhook', path, span: p.span(t.span.start) });
    } else {
      const help = t.kind === 'Word' ? didYouMeanWord(t.text, ['timeout', 'webhook']) : undefined;
      p.error('E2007', t.span, `Expected a resume trigger (\`timeout\`, \`webhook "/path"\`) but found ${describeToken(t)}`, help);
      throw ABORT;
    }
  } while (p.eat('|'));
  return triggers;
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
