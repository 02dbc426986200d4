/**
 * Option blocks `{ key: value, … }` and the option values shared by several constructs: fetch
 * options (paginate, since, retry, allow, …), retry blocks and literal values.
 *
 * Invariant: every known key is parsed into its typed field and its key span recorded in
 * `optionSpans`; an unknown key is one E2006 (with "did you mean" help when a known key is
 * close) and its value is skipped as a balanced group, so the next key parses cleanly.
 */
import type { FetchOptions, OptionSpans, Paginate, RetryConfig, Since, SinceFormat, Span } from './ast.js';
import { ABORT, didYouMeanWord, listWords, type Parser } from './parser-core.js';
import { parseExpr } from './parser-expr.js';
import { describeToken } from './token.js';

export type OptionHandlers = Record<string, () => void>;

/** Parses `{ … }` at the cursor dispatching each key to its handler; returns the block's span. */
export function parseOptionBlock(p: Parser, context: string, handlers: OptionHandlers, spans: OptionSpans): Span {
  const start = p.tok.span.start;
  const known = (): string[] => Object.keys(handlers); // only needed for messages
  p.parseBlock(
    `the ${context} options`,
    () => {
      const key = p.tok;
      if (key.kind !== 'Word') p.fail('E2001', `a ${context} option name or "}"`, `${context} options: ${listWords(known())}`);
      p.advance();
      p.expect(':', `write \`${key.text}: value\``);
      const handler = Object.hasOwn(handlers, key.text) ? handlers[key.text] : undefined;
      if (handler === undefined) {
        const help = didYouMeanWord(key.text, known()) ?? `${context} options: ${listWords(known())}`;
        p.error('E2006', key.span, `Unknown ${context} option \`${key.text}\``, help);
        p.skipValue();
        return;
      }
      if (Object.hasOwn(spans, key.text)) {
        p.error('E2014', key.span, `Option \`${key.text}\` is given twice`, 'remove one of them');
      }
      spans[key.text] = key.span;
      handler();
    },
    (i) => p.isKeyAt(i),
  );
  return p.span(start);
}

// ---------------------------------------------------------------------------------------------
// Literal values

function isIntegerToken(p: Parser): boolean {
  const t = p.tok;
  return t.kind === 'Number' && Number.isInteger(t.number) && !t.text.includes('.');
}

/** A non-negative integer literal (counts, milliseconds, sizes). */
export function intValue(p: Parser, what = 'an integer'): number {
  if (!isIntegerToken(p)) p.fail('E2013', what);
  return p.advance().number;
}

export function numberValue(p: Parser, what = 'a number'): number {
  if (!p.at('Number')) p.fail('E2013', what);
  return p.advance().number;
}

export function boolValue(p: Parser): boolean {
  const t = p.tok;
  if (t.kind !== 'Word' || (t.text !== 'true' && t.text !== 'false')) p.fail('E2001', '`true` or `false`');
  p.advance();
  return t.text === 'true';
}

/** One word out of a fixed set (`backoff: constant`); a close misspelling gets "did you mean". */
export function enumValue<T extends string>(p: Parser, allowed: readonly T[], what: string): { value: T; span: Span } {
  const t = p.tok;
  if (t.kind === 'Word' && (allowed as readonly string[]).includes(t.text)) {
    p.advance();
    return { value: t.text as T, span: t.span };
  }
  const help = t.kind === 'Word' ? didYouMeanWord(t.text, allowed) : undefined;
  p.error('E2007', t.span, `Expected ${what} (${listWords(allowed)}) but found ${describeToken(t)}`, help);
  throw ABORT;
}

// ---------------------------------------------------------------------------------------------
// Retry blocks and fetch options

const BACKOFFS = ['exponential', 'linear', 'constant'] as const;

export function parseRetryBlock(p: Parser): RetryConfig {
  const cfg: RetryConfig = { optionSpans: {}, span: p.tok.span };
  cfg.span = parseOptionBlock(
    p,
    'retry',
    {
      maxAttempts: () => (cfg.maxAttempts = intValue(p)),
      backoff: () => (cfg.backoff = enumValue(p, BACKOFFS, 'a backoff').value),
      initialDelay: () => (cfg.initialDelay = intValue(p, 'a delay in milliseconds')),
      maxDelay: () => (cfg.maxDelay = intValue(p, 'a delay in milliseconds')),
      timeout: () => (cfg.timeout = intValue(p, 'a timeout in milliseconds')),
    },
    cfg.optionSpans,
  );
  return cfg;
}

/** `{ source, body, paginate, until, retry, since, allow, backfill, maxPages, maxItems, itemsPath }`, if present. */
export function parseFetchOptions(p: Parser): FetchOptions {
  const o: FetchOptions = { optionSpans: {} };
  if (!p.at('{')) return o;
  parseOptionBlock(
    p,
    'fetch',
    {
      source: () => (o.source = p.expectName('a source name')),
      body: () => (o.body = parseExpr(p)),
      paginate: () => (o.paginate = parsePaginate(p)),
      until: () => (o.until = parseExpr(p)),
      retry: () => (o.retry = parseRetryBlock(p)),
      since: () => (o.since = parseSince(p)),
      allow: () => (o.allow = parseAllow(p)),
      backfill: () => (o.backfill = boolValue(p)),
      maxPages: () => (o.maxPages = intValue(p)),
      maxItems: () => (o.maxItems = intValue(p)),
      itemsPath: () => (o.itemsPath = p.expectString('a dotted path string such as "data.items"')),
    },
    o.optionSpans,
  );
  return o;
}

const STRATEGIES = ['offset', 'page', 'cursor'] as const;
const PAGINATE_EXAMPLE = {
  offset: 'offset(offset, 100)',
  page: 'page(page, 50)',
  cursor: 'cursor(after, 50, "meta.next")',
} as const;

/** `offset(p, N)`, `page(p, N)`, `cursor(p, N, "a.b")`, each with an optional size parameter name last. */
function parsePaginate(p: Parser): Paginate {
  const start = p.tok.span.start;
  const strategy = enumValue(p, STRATEGIES, 'a pagination strategy').value;
  const example = `write \`${PAGINATE_EXAMPLE[strategy]}\``;
  p.expect('(', example);
  const param = p.expectName('the name of the query parameter');
  if (!p.at(',')) {
    if (p.at(')')) p.fail('E2008', 'a page size', example);
    p.fail('E2001', '","', example);
  }
  p.advance();
  const size = p.tok;
  if (size.kind !== 'Number' || !Number.isInteger(size.number) || size.number <= 0 || size.text.includes('.')) {
    p.error('E2008', size.span, `Expected a page size but found ${describeToken(size)}: page size must be a positive integer`, example);
    throw ABORT;
  }
  p.advance();
  const result: Paginate = { strategy, param, pageSize: size.number, span: size.span };
  if (strategy === 'cursor') {
    if (!p.eat(',')) p.fail('E2008', '"," and the path of the next cursor', example);
    result.cursorPath = p.expectString('the path of the next cursor as a string, such as "meta.next"');
  }
  if (p.eat(',')) {
    if (p.at('String')) {
      p.error('E2008', p.tok.span, 'Only `cursor(…)` takes a cursor path', example);
      throw ABORT;
    }
    result.sizeParam = p.expectName('the name of the page-size query parameter');
  }
  p.expect(')', example);
  result.span = p.span(start);
  return result;
}

const FORMATS: readonly SinceFormat[] = ['iso', 'unix', 'unix-ms', 'date-only'];

/** `lastSync("key")? { param, format, updateFrom, header }?`, or any expression. */
function parseSince(p: Parser): Since {
  const start = p.tok.span.start;
  if (!p.atWord('lastSync') || p.peek().kind === '.') {
    const value = parseExpr(p);
    return { kind: 'SinceExpr', value, span: value.span };
  }
  p.advance();
  const since: Since = { kind: 'LastSync', optionSpans: {}, span: p.span(start) };
  if (p.eat('(')) {
    since.key = p.expectString('the checkpoint key as a string');
    p.expect(')');
  }
  if (p.at('{')) {
    parseOptionBlock(
      p,
      'lastSync',
      {
        param: () => (since.param = p.expectString('a query parameter name as a string').value),
        format: () => (since.format = parseFormat(p)),
        updateFrom: () => (since.updateFrom = p.expectString('a dotted path string').value),
        header: () => (since.header = p.expectString('a header name as a string').value),
      },
      since.optionSpans,
    );
  }
  since.span = p.span(start);
  return since;
}

/** `iso`, `unix`, `unix-ms`, `date-only` — as words (the hyphenated ones are three tokens) or strings. */
function parseFormat(p: Parser): SinceFormat {
  const t = p.tok;
  let text: string | undefined;
  if (t.kind === 'String') {
    text = t.value;
    p.advance();
  } else if (t.kind === 'Word') {
    const dash = p.peek();
    const rest = p.peek(2);
    if (dash.kind === '-' && dash.span.start === t.span.end && rest.kind === 'Word' && rest.span.start === dash.span.end) {
      text = `${t.text}-${rest.text}`;
      p.advance();
      p.advance();
    } else text = t.text;
    p.advance();
  }
  if (text !== undefined && (FORMATS as readonly string[]).includes(text)) return text as SinceFormat;
  const span = { start: t.span.start, end: p.prevEnd > t.span.start ? p.prevEnd : t.span.end };
  const found = text === undefined ? describeToken(t) : `"${text}"`;
  p.error('E2007', span, `Expected a sync format (${listWords(FORMATS)}) but found ${found}`, text === undefined ? undefined : didYouMeanWord(text, FORMATS));
  throw ABORT;
}

/** `[404, 410]`: statuses returned as data instead of failing the fetch. */
function parseAllow(p: Parser): { statuses: number[]; span: Span } {
  const start = p.expect('[', 'write `allow: [404]`').span.start;
  const statuses: number[] = [];
  while (!p.at(']')) {
    statuses.push(intValue(p, 'an HTTP status code'));
    if (p.at(']')) break;
    if (!p.at(',')) p.fail('E2001', '"," or "]"', 'statuses are separated by commas');
    p.advance();
  }
  p.advance();
  return { statuses, span: p.span(start) };
}
