/**
 * Option blocks `{ key: value, … }` and the option values shared by several constructs: fetch
 * options (paginate, since, retry, allow, …), retry blocks and literal values.
 *
 * Invariant: every known key is parsed into its typed field and its key span recorded in
 * `optionSpans`; an unknown key is one E2006 (with "did you mean" help when a known key is
 * close) and its value is skipped as a balanced group, so the next key parses cleanly.
 */
import type { FetchOptions, Name, OptionSpans, Paginate, RetryConfig, Since, SinceFormat, Span, StringLiteral } from './ast.js';
import { ABORT, didYouMeanWord, listWords, type BlockRules, type Parser } from './parser-core.js';
import { parseExpr } from './parser-expr.js';
import { optionSpan, spanOf } from './ast.js';

/**
 * The options one kind of block accepts: its `keys` (in the order messages list them) and
 * `parse`, which reads the value of one known key into `target`. Sets are module-level
 * constants — one switch over the key instead of a closure per key per block.
 */
export interface OptionSet<T, K extends string = string> {
  /** Names the block in messages: "fetch" → "the fetch options", "Unknown fetch option". */
  context: string;
  keys: readonly K[];
  parse(p: Parser, key: K, target: T): void;
  /** Keys upstream's docs write here that we do not take, with the form to write instead (E2006's help). */
  insteadOf?: Readonly<Record<string, string>>;
}

/** One option block being parsed: the state its BlockRules are handed. */
interface OptionBlock {
  set: OptionSet<unknown>;
  target: unknown;
  spans: OptionSpans;
}

const OPTION_BLOCK: BlockRules<OptionBlock> = {
  describe: ({ set }) => `the ${set.context} options`,
  item: (p, { set, target, spans }) => {
    const { context, keys } = set;
    const key = p.pos;
    if (p.kind !== 'Word') p.fail('E2001', `a ${context} option name or "}"`, `${context} options: ${listWords(keys)}`);
    p.advance();
    const text = p.textAt(key);
    if (!p.eat(':')) p.expect(':', `write \`${text}: value\``); // help built on failure only
    if (!keys.includes(text)) {
      const instead = set.insteadOf !== undefined && Object.hasOwn(set.insteadOf, text) ? set.insteadOf[text] : undefined;
      const help = instead ?? didYouMeanWord(text, keys) ?? `${context} options: ${listWords(keys)}`;
      p.error('E2006', p.spanAt(key), `${instead ? 'Not supported:' : 'Unknown'} ${context} option \`${text}\``, help);
      p.skipValue();
      return;
    }
    if (Object.hasOwn(spans, text)) {
      p.error('E2014', p.spanAt(key), `Option \`${text}\` is given twice`, 'remove one of them');
    }
    spans[text] = p.startAt(key);
    set.parse(p, text, target);
  },
  isItemStart: (p, i) => p.isKeyAt(i),
};

/** Parses `{ … }` at the cursor, each known key into `target`; returns the block's span. */
export function parseOptionBlock<T, K extends string>(p: Parser, set: OptionSet<T, K>, target: T, spans: OptionSpans): Span {
  const start = p.start;
  const block: OptionBlock = { set: set as unknown as OptionSet<unknown>, target, spans };
  p.parseBlock(OPTION_BLOCK, block);
  return p.span(start);
}

/** For the `never` branch of an option set's switch: the block checked the key already. */
export function unknownKey(key: never): never {
  throw new Error(`option key ${String(key)} has no parser`);
}

// ---------------------------------------------------------------------------------------------
// Literal values

function isIntegerToken(p: Parser): boolean {
  const t = p.pos;
  return p.kind === 'Number' && Number.isInteger(p.numberAt(t)) && !p.hasDot(t);
}

/** A non-negative integer literal (counts, milliseconds, sizes). */
export function intValue(p: Parser, what = 'an integer', help?: string): number {
  if (!isIntegerToken(p)) p.fail('E2013', what, help);
  return p.numberAt(p.advance());
}

export function numberValue(p: Parser, what = 'a number'): number {
  if (!p.at('Number')) p.fail('E2013', what);
  return p.numberAt(p.advance());
}

export function boolValue(p: Parser): boolean {
  const isTrue = p.atWord('true');
  if (!isTrue && !p.atWord('false')) p.fail('E2001', '`true` or `false`');
  p.advance();
  return isTrue;
}

/**
 * One word out of a fixed set (`backoff: constant`); a close misspelling gets "did you mean".
 * The same word quoted (`backoff: "constant"`, as upstream's docs and examples write it) means
 * the same thing; a quoted word outside the set is the same E2007.
 */
export function enumValue<T extends string>(p: Parser, allowed: readonly T[], what: string): { value: T; span: Span } {
  const t = p.pos;
  const kind = p.kind;
  const isWord = kind === 'Word';
  const text = kind === 'String' ? p.valueAt(t) : p.textAt(t);
  if ((isWord || kind === 'String') && (allowed as readonly string[]).includes(text)) {
    p.advance();
    return { value: text as T, span: p.spanAt(t) };
  }
  const help = isWord || kind === 'String' ? didYouMeanWord(text, allowed) : undefined;
  const found = kind === 'String' ? JSON.stringify(text) : p.describe(t);
  p.error('E2007', p.spanAt(t), `Expected ${what} (${listWords(allowed)}) but found ${found}`, help);
  throw ABORT;
}

// ---------------------------------------------------------------------------------------------
// Retry blocks and fetch options

const BACKOFFS = ['exponential', 'linear', 'constant'] as const;

const RETRY_OPTIONS: OptionSet<RetryConfig, 'maxAttempts' | 'backoff' | 'initialDelay' | 'maxDelay' | 'delay' | 'timeout'> = {
  context: 'retry',
  keys: ['maxAttempts', 'backoff', 'initialDelay', 'maxDelay', 'delay', 'timeout'],
  parse(p, key, cfg) {
    switch (key) {
      case 'maxAttempts': cfg.maxAttempts = intValue(p); return;
      case 'backoff': cfg.backoff = enumValue(p, BACKOFFS, 'a backoff').value; return;
      case 'initialDelay': cfg.initialDelay = intValue(p, 'a delay in milliseconds'); return;
      case 'maxDelay': cfg.maxDelay = intValue(p, 'a delay in milliseconds'); return;
      case 'delay': cfg.delay = fixedDelay(p); return;
      case 'timeout': cfg.timeout = intValue(p, 'a timeout in milliseconds'); return;
      default: unknownKey(key);
    }
  },
};

export function parseRetryBlock(p: Parser): RetryConfig {
  const cfg: RetryConfig = {
    optionSpans: {}, start: p.startAt(p.pos), end: p.endAt(p.pos),
    maxAttempts: undefined, backoff: undefined, initialDelay: undefined, maxDelay: undefined, delay: undefined, timeout: undefined,
  };
  const block = parseOptionBlock(p, RETRY_OPTIONS, cfg, cfg.optionSpans);
  cfg.start = block.start;
  cfg.end = block.end;
  if (cfg.delay !== undefined) {
    // A fixed delay is its own backoff: one given with it would say two things.
    for (const key of ['backoff', 'initialDelay'] as const) {
      const span = optionSpan(cfg.optionSpans, key);
      if (span) p.error('E2014', span, `\`${key}\` given with \`delay\` (a fixed delay is a constant backoff of that many ms)`, `remove \`${key}\`, or \`delay\``);
    }
  }
  return cfg;
}

/**
 * `delay: 60000`: milliseconds. A computed delay (upstream's docs show `delay: h["Retry-After"] * 1000`)
 * is not supported: a retry's policy is fixed when the mission is read. Named, then read past.
 */
function fixedDelay(p: Parser): number | undefined {
  if (p.kind === 'Number') return intValue(p, 'a delay in milliseconds');
  const start = p.start;
  const expr = parseExpr(p);
  p.error('E2013', { start, end: spanOf(expr).end }, 'A computed `delay` is not supported: a retry\'s delay is a number of milliseconds fixed in the mission', 'write `delay: 60000`');
  return undefined;
}

type FetchKey =
  | 'source' | 'body' | 'params' | 'headers' | 'timeout' | 'paginate' | 'until' | 'retry' | 'since' | 'allow' | 'backfill' | 'maxPages' | 'maxItems'
  | 'itemsPath' | 'sinceParam' | 'sinceFormat';

/**
 * While a fetch block parses: the options, and upstream's flat `sinceParam: "…"` /
 * `sinceFormat: "…"`, which `parseFetchOptions` folds into `since: lastSync { param, format }`
 * once the block is read.
 */
interface FetchBlock {
  options: FetchOptions;
  sinceParam?: { value: string; span: Span };
  sinceFormat?: { value: SinceFormat; span: Span };
}

const FETCH_OPTIONS: OptionSet<FetchBlock, FetchKey> = {
  context: 'fetch',
  keys: ['source', 'body', 'params', 'headers', 'timeout', 'paginate', 'until', 'retry', 'since', 'allow', 'backfill', 'maxPages', 'maxItems', 'itemsPath', 'sinceParam', 'sinceFormat'],
  parse(p, key, b) {
    const o = b.options;
    switch (key) {
      case 'sinceParam': {
        const t = p.pos;
        b.sinceParam = { value: p.expectString('a query parameter name as a string').value, span: p.spanAt(t) };
        return;
      }
      case 'sinceFormat': {
        const t = p.pos;
        b.sinceFormat = { value: parseFormat(p), span: p.spanAt(t) };
        return;
      }
      case 'source': o.source = sourceName(p); return;
      case 'body': o.body = parseExpr(p); return;
      case 'params': o.params = parseExpr(p); return;
      case 'headers': o.headers = parseExpr(p); return;
      case 'timeout': o.timeout = intValue(p, 'a timeout in milliseconds'); return;
      case 'paginate': o.paginate = parsePaginate(p); return;
      case 'until': o.until = parseExpr(p); return;
      case 'retry': o.retry = parseRetryBlock(p); return;
      case 'since': o.since = parseSince(p); return;
      case 'allow': o.allow = parseAllow(p); return;
      case 'backfill': o.backfill = boolValue(p); return;
      case 'maxPages': o.maxPages = intValue(p); return;
      case 'maxItems': o.maxItems = intValue(p); return;
      case 'itemsPath': {
        const itemsPath = p.expectString('a dotted path string such as "data.items"');
        // Empty, it named nothing and the records were taken from the page's first list, silently.
        if (itemsPath.value.trim() === '') p.error('E2008', itemsPath, 'The `itemsPath` is empty: it names no field, so the records would be taken from the first list as without it', 'write the field that holds the records, such as "data" or "result.items", or remove `itemsPath`');
        o.itemsPath = itemsPath;
        return;
      }
      default: unknownKey(key);
    }
  },
};

/**
 * `source: Api`, or quoted, `source: "Api"` (upstream's examples quote it, as they quote option
 * words): the same name, so the checks resolve it as a declared source either way.
 */
function sourceName(p: Parser): Name {
  if (p.at('String')) {
    const s = p.expectString('a source name');
    return { name: s.value, start: s.start, end: s.end };
  }
  return p.expectName('a source name');
}

/** `{ source, body, paginate, until, retry, since, allow, backfill, maxPages, maxItems, itemsPath }`, if present. */
export function parseFetchOptions(p: Parser): FetchOptions {
  // Every option in the literal, undefined until given: see "One literal per node" (parser-core.ts).
  const o: FetchOptions = {
    optionSpans: {}, source: undefined, body: undefined, params: undefined, headers: undefined, timeout: undefined, paginate: undefined, until: undefined, retry: undefined, since: undefined,
    allow: undefined, backfill: undefined, maxPages: undefined, maxItems: undefined, itemsPath: undefined,
  };
  if (!p.at('{')) return o;
  const b: FetchBlock = { options: o };
  parseOptionBlock(p, FETCH_OPTIONS, b, o.optionSpans);
  if (b.sinceParam || b.sinceFormat) foldSinceOptions(p, b);
  return o;
}

/** `since: lastSync, sinceParam: "x", sinceFormat: unix` means `since: lastSync { param: "x", format: unix }`. */
function foldSinceOptions(p: Parser, b: FetchBlock): void {
  const { sinceParam, sinceFormat } = b;
  const since = b.options.since;
  if (since?.kind !== 'LastSync') {
    const first = (sinceParam ?? sinceFormat)!;
    const key = sinceParam ? 'sinceParam' : 'sinceFormat';
    p.error('E2017', first.span, `\`${key}\` needs \`since: lastSync\` in the same fetch options`, 'add `since: lastSync`, or write `since: lastSync { param: "…", format: iso }`');
    return;
  }
  if (sinceParam) {
    if (since.param !== undefined) p.error('E2014', sinceParam.span, 'The sync parameter is given twice (`sinceParam` and `lastSync { param }`)', 'remove one of them');
    else since.param = sinceParam.value;
  }
  if (sinceFormat) {
    if (since.format !== undefined) p.error('E2014', sinceFormat.span, 'The sync format is given twice (`sinceFormat` and `lastSync { format }`)', 'remove one of them');
    else since.format = sinceFormat.value;
  }
}

const STRATEGIES = ['offset', 'page', 'cursor'] as const;
const PAGINATE_EXAMPLE = {
  offset: 'offset(offset, 100)',
  page: 'page(page, 50)',
  cursor: 'cursor(after, 50, "meta.next")',
} as const;

/**
 * `offset(p, N)`, `page(p, N)`, `cursor(p, N, "a.b")`, each with an optional size parameter name
 * last; or the same as an object (`{ type: page, param: "page", pageSize: 100 }`, upstream's docs).
 */
function parsePaginate(p: Parser): Paginate {
  if (p.at('{')) return parsePaginateObject(p);
  const start = p.start;
  const strategy = enumValue(p, STRATEGIES, 'a pagination strategy').value;
  const example = `write \`${PAGINATE_EXAMPLE[strategy]}\``;
  p.expect('(', example);
  const param = p.expectName('the name of the query parameter');
  if (!p.at(',')) {
    if (p.at(')')) p.fail('E2008', 'a page size', example);
    p.fail('E2001', '","', example);
  }
  p.advance();
  const pageSize = pageSizeValue(p, example);
  let cursorPath: StringLiteral | undefined;
  if (strategy === 'cursor') {
    if (!p.eat(',')) p.fail('E2008', '"," and the path of the next cursor', example);
    cursorPath = cursorPathValue(p);
  }
  let sizeParam: Name | undefined;
  if (p.eat(',')) {
    if (p.at('String')) {
      p.error('E2008', p.spanAt(p.pos), 'Only `cursor(…)` takes a cursor path', example);
      throw ABORT;
    }
    sizeParam = p.expectName('the name of the page-size query parameter');
  }
  p.expect(')', example);
  return { strategy, param, pageSize, start, end: p.endFrom(start), cursorPath, sizeParam };
}

/** While `paginate: { … }` parses: each key as written, checked together once the block is read. */
interface PaginateBlock {
  type?: { value: Paginate['strategy']; span: Span };
  param?: Name;
  pageSize?: { value: number; span: Span };
  cursorPath?: StringLiteral;
  sizeParam?: Name;
  firstPage?: { value: number; span: Span };
}

/** The next cursor's path: an empty one names nothing, and every page of the walk would fail on it. */
function cursorPathValue(p: Parser): StringLiteral {
  const path = p.expectString('the path of the next cursor as a string, such as "meta.next"');
  if (path.value.trim() === '') p.error('E2008', path, 'The path of the next cursor is empty: the walk could never find a next page', 'write the field that holds it, such as "meta.next" or "next_cursor"');
  return path;
}

const PAGINATE_OPTIONS: OptionSet<PaginateBlock, 'type' | 'param' | 'pageSize' | 'cursorPath' | 'sizeParam' | 'firstPage'> = {
  context: 'paginate',
  keys: ['type', 'param', 'pageSize', 'cursorPath', 'sizeParam', 'firstPage'],
  parse(p, key, b) {
    switch (key) {
      case 'type': b.type = enumValue(p, STRATEGIES, 'a pagination strategy'); return;
      case 'param': b.param = nameOrString(p, 'the name of the query parameter'); return;
      case 'pageSize': {
        const t = p.pos;
        b.pageSize = { value: pageSizeValue(p, 'write `pageSize: 100`'), span: p.spanAt(t) };
        return;
      }
      case 'cursorPath': b.cursorPath = cursorPathValue(p); return;
      case 'sizeParam': b.sizeParam = nameOrString(p, 'the name of the page-size query parameter'); return;
      case 'firstPage': {
        const t = p.pos;
        const value = p.numberAt(t);
        if (p.kind !== 'Number' || !Number.isInteger(value) || value < 0 || p.hasDot(t)) {
          p.error('E2008', p.spanAt(t), `Expected the number of the first page but found ${p.describe(t)}: it must be a whole number, 0 or more`, 'write `firstPage: 0` for an API that counts pages from 0');
          throw ABORT;
        }
        p.advance();
        b.firstPage = { value, span: p.spanAt(t) };
        return;
      }
      default: unknownKey(key);
    }
  },
};

/** A query parameter name, bare (`page`) or quoted (`"page"`): the same name. */
function nameOrString(p: Parser, what: string): Name {
  if (p.at('String')) {
    const s = p.expectString(what);
    return { name: s.value, start: s.start, end: s.end };
  }
  return p.expectName(`${what} (a word or a string)`);
}

/** A positive integer page size at the cursor; E2008 otherwise. */
function pageSizeValue(p: Parser, example: string): number {
  const size = p.pos;
  const pageSize = p.numberAt(size);
  if (p.kind !== 'Number' || !Number.isInteger(pageSize) || pageSize <= 0 || p.hasDot(size)) {
    p.error('E2008', p.spanAt(size), `Expected a page size but found ${p.describe(size)}: page size must be a positive integer`, example);
    throw ABORT;
  }
  p.advance();
  return pageSize;
}

/**
 * `paginate: { type, param, pageSize, cursorPath?, sizeParam?, firstPage? }`: the call form's
 * arguments by name. `type`, `param` and `pageSize` are required, `cursorPath` with `type: cursor`
 * only; `type: cursor` may leave out `pageSize` unless it names a `sizeParam` to send it in.
 * `firstPage` (`type: page` only, which the call form cannot say) is the number of the first page,
 * for an API that counts from 0 (Spring Data's `page=0`).
 */
function parsePaginateObject(p: Parser): Paginate {
  const start = p.start;
  const b: PaginateBlock = {};
  const spans: OptionSpans = {};
  const span = parseOptionBlock(p, PAGINATE_OPTIONS, b, spans);
  const missing = (key: string, example: string): never => {
    // A key that was given but whose value was refused is reported already.
    if (Object.hasOwn(spans, key)) throw ABORT;
    p.error('E2017', { start, end: start + 1 }, `Missing option \`${key}\` in \`paginate: { … }\``, example);
    throw ABORT;
  };
  const { type, param, pageSize } = b;
  if (type === undefined) return missing('type', 'write `paginate: { type: page, param: "page", pageSize: 100 }` (type: offset, page or cursor)');
  const example = `write \`paginate: { type: ${type.value}, param: "${type.value === 'cursor' ? 'after' : type.value}", pageSize: 100${type.value === 'cursor' ? ', cursorPath: "meta.next"' : ''} }\``;
  if (param === undefined) return missing('param', example);
  // A cursor's next cursor says whether more pages follow: its page size is needed only to send.
  if (pageSize === undefined && (type.value !== 'cursor' || b.sizeParam !== undefined)) return missing('pageSize', example);
  const result: Paginate = { strategy: type.value, param, pageSize: pageSize?.value, start: span.start, end: span.end };
  if (type.value === 'cursor') {
    if (b.cursorPath === undefined) return missing('cursorPath', example);
    result.cursorPath = b.cursorPath;
  } else if (b.cursorPath !== undefined) {
    p.error('E2008', spanOf(b.cursorPath), `Only \`type: cursor\` takes a \`cursorPath\` (this is \`type: ${type.value}\`)`, 'remove `cursorPath`, or write `type: cursor`');
  }
  if (b.sizeParam !== undefined) result.sizeParam = b.sizeParam;
  if (b.firstPage !== undefined) {
    if (type.value === 'page') result.firstPage = b.firstPage.value;
    else p.error('E2008', b.firstPage.span, `Only \`type: page\` takes a \`firstPage\` (this is \`type: ${type.value}\`)`, type.value === 'offset' ? 'an offset walk starts at offset 0; remove `firstPage`' : 'remove `firstPage`: a cursor walk starts with no cursor');
  }
  return result;
}

const FORMATS: readonly SinceFormat[] = ['iso', 'unix', 'unix-ms', 'date-only', 'http-date'];

/** `lastSync("key")? { param, format, updateFrom, header }?`, or any expression. */
function parseSince(p: Parser): Since {
  const start = p.start;
  if (!p.atWord('lastSync') || p.peekKind() === '.') {
    const value = parseExpr(p);
    return { kind: 'SinceExpr', value, start: value.start, end: value.end };
  }
  p.advance();
  const since: LastSync = {
    kind: 'LastSync', optionSpans: {}, start, end: p.endFrom(start),
    key: undefined, param: undefined, format: undefined, updateFrom: undefined, header: undefined,
  };
  if (p.eat('(')) {
    // A string, or an expression evaluated per request: one checkpoint per tenant of a loop.
    since.key = parseExpr(p);
    // Empty, it was the default key (source and path) without a word: shared with every bare lastSync of that path.
    if (since.key.kind === 'String' && since.key.value.trim() === '') p.error('E2008', since.key, 'The checkpoint key of `lastSync("")` is empty', 'name the checkpoint, such as `lastSync("orders")`, or write `lastSync` alone for the default key (the source and the path)');
    p.expect(')');
  }
  if (p.at('{')) parseOptionBlock(p, LAST_SYNC_OPTIONS, since, since.optionSpans);
  since.end = p.endFrom(start);
  return since;
}

type LastSync = Extract<Since, { kind: 'LastSync' }>;

const LAST_SYNC_OPTIONS: OptionSet<LastSync, 'param' | 'format' | 'updateFrom' | 'header'> = {
  context: 'lastSync',
  keys: ['param', 'format', 'updateFrom', 'header'],
  parse(p, key, since) {
    switch (key) {
      case 'param': since.param = p.expectString('a query parameter name as a string').value; return;
      case 'format': since.format = parseFormat(p); return;
      case 'updateFrom': since.updateFrom = p.expectString('a dotted path string').value; return;
      case 'header': since.header = p.expectString('a header name as a string').value; return;
      default: unknownKey(key);
    }
  },
};

/** `iso`, `unix`, `unix-ms`, `date-only` — as words (the hyphenated ones are three tokens) or strings. */
function parseFormat(p: Parser): SinceFormat {
  const t = p.pos;
  const kind = p.kind;
  let text: string | undefined;
  if (kind === 'String') {
    text = p.valueAt(t);
    p.advance();
  } else if (kind === 'Word') {
    const dash = p.peekIndex();
    const rest = p.peekIndex(2);
    if (p.kindAt(dash) === '-' && p.startAt(dash) === p.endAt(t) && p.kindAt(rest) === 'Word' && p.startAt(rest) === p.endAt(dash)) {
      text = `${p.textAt(t)}-${p.textAt(rest)}`;
      p.advance();
      p.advance();
    } else text = p.textAt(t);
    p.advance();
  }
  if (text !== undefined && (FORMATS as readonly string[]).includes(text)) return text as SinceFormat;
  const tStart = p.startAt(t);
  const span = { start: tStart, end: p.prevEnd > tStart ? p.prevEnd : p.endAt(t) };
  const found = text === undefined ? p.describe(t) : `"${text}"`;
  p.error('E2007', span, `Expected a sync format (${listWords(FORMATS)}) but found ${found}`, text === undefined ? undefined : didYouMeanWord(text, FORMATS));
  throw ABORT;
}

/** `[404, 410]`: statuses returned as data instead of failing the fetch. */
function parseAllow(p: Parser): { statuses: number[]; start: number; end: number } {
  const start = p.startAt(p.expect('[', 'write `allow: [404]`'));
  const statuses = p.mark();
  while (!p.at(']')) {
    p.add(intValue(p, 'an HTTP status code'));
    if (p.at(']')) break;
    if (!p.at(',')) p.fail('E2001', '"," or "]"', 'statuses are separated by commas');
    p.advance();
  }
  p.advance();
  return { statuses: p.take<number>(statuses), start, end: p.endFrom(start) };
}
