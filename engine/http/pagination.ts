/**
 * Pagination as pure functions plus one small driver loop (§C.1.5).
 *
 * Page k (0-based) asks for: offset → `param = k·N`; page → `param = k+1`; cursor → nothing on the
 * first page, then `param = <value at cursorPath of the previous page>`. The page size is sent
 * only when the mission names its parameter (`sizeParam`).
 *
 * A page's items: `itemsPath` when given, else the response itself when it is an array, else the
 * first array-valued top-level property (refused when it is empty and a later one is not, and a
 * page whose list field holds a non-empty object is refused). More pages: offset/page while a page
 * is full (`items.length >= N`); cursor while the next cursor is present and non-empty.
 *
 * Invariants: `until` (evaluated by the caller, who has the evaluator) sees each page's raw body
 * before its items are kept; a page that satisfies it is the last one: its items are kept (it is
 * the last page, as `until: response.has_more == false` says, not a page past the end) and no
 * further page is asked for. Hitting `maxPages`
 * (default 10 000) or `maxItems` (default unlimited) while more pages exist marks the result
 * `truncated` (a truncated sync must not advance its checkpoint); a cursor that repeats is an
 * error, not an endless loop. A page asked for because the one before said more were left must
 * hold the list the pages before it held: an empty list, `null` or an empty body ends the
 * pagination, an absent one (an in-band error, `{ "error": "rate limited" }`) is an error, never
 * taken for the last page (see `refuseListless`).
 */

import type { QueryParams } from './request-builder.js';

export type PageStrategy = 'offset' | 'page' | 'cursor';

export interface PaginationPlan {
  strategy: PageStrategy;
  param: string;
  /** Absent only for a cursor pagination that sends no size (no sizeParam). */
  pageSize?: number;
  /** cursor only: dotted path of the next cursor in each page. */
  cursorPath?: string;
  sizeParam?: string;
  itemsPath?: string;
  maxPages?: number;
  maxItems?: number;
}

export const DEFAULT_MAX_PAGES = 10_000;

export class PaginationError extends Error {
  readonly code = 'pagination';
  constructor(message: string) {
    super(message);
    this.name = 'PaginationError';
  }
}

/** Rejects plans that would misbehave at run time (a page size of 0 re-fetches page 1 forever). */
export function validatePlan(plan: PaginationPlan): void {
  // A cursor's next cursor says whether more pages follow: it needs a size only to send one.
  const needsSize = plan.strategy !== 'cursor' || plan.sizeParam !== undefined;
  if ((needsSize || plan.pageSize !== undefined) && (!Number.isInteger(plan.pageSize) || plan.pageSize! <= 0)) {
    throw new PaginationError(`page size must be a positive integer, got ${plan.pageSize}`);
  }
  if (plan.strategy === 'cursor' && !plan.cursorPath) {
    throw new PaginationError(`cursor pagination needs the path of the next cursor: cursor(${plan.param}, ${plan.pageSize ?? 100}, "meta.next")`);
  }
  if (plan.maxPages !== undefined && (!Number.isInteger(plan.maxPages) || plan.maxPages < 1)) {
    throw new PaginationError(`maxPages must be an integer >= 1, got ${plan.maxPages}`);
  }
  if (plan.maxItems !== undefined && (!Number.isInteger(plan.maxItems) || plan.maxItems < 1)) {
    throw new PaginationError(`maxItems must be an integer >= 1, got ${plan.maxItems}`);
  }
}

/** Query parameters for page `index` (0-based); `cursor` is the previous page's next cursor. */
export function pageQuery(plan: PaginationPlan, index: number, cursor?: string): QueryParams {
  const out: QueryParams = [];
  switch (plan.strategy) {
    case 'offset':
      out.push([plan.param, String(index * plan.pageSize!)]);
      break;
    case 'page':
      out.push([plan.param, String(index + 1)]);
      break;
    case 'cursor':
      if (index > 0) {
        if (cursor === undefined) throw new PaginationError(`page ${index + 1} of a cursor pagination needs a cursor`);
        out.push([plan.param, cursor]);
      }
      break;
    default: {
      const never: never = plan.strategy;
      throw new PaginationError(`unknown pagination strategy ${String(never)}`);
    }
  }
  if (plan.sizeParam && plan.pageSize !== undefined) out.push([plan.sizeParam, String(plan.pageSize)]);
  return out;
}

/**
 * Value at a dotted path (`a.b.0.c`), where a segment may end in array indexes, `[-1]` counting
 * from the end (`data[-1].id`: the last item's id, Stripe's cursor); undefined when any step is missing.
 */
export function getPath(value: unknown, path: string): unknown {
  let cur: unknown = value;
  for (const part of path.split('.')) {
    if (part === '') continue;
    const indexed = INDEXED_SEGMENT.exec(part);
    const name = indexed ? indexed[1]! : part;
    if (name !== '') {
      if (cur === null || typeof cur !== 'object') return undefined;
      cur = Object.prototype.hasOwnProperty.call(cur, name) ? (cur as Record<string, unknown>)[name] : undefined;
    }
    if (indexed) {
      for (const [, digits] of indexed[2]!.matchAll(/\[(-?\d+)\]/g)) {
        if (!Array.isArray(cur)) return undefined;
        const index = Number(digits);
        cur = cur[index < 0 ? cur.length + index : index];
      }
    }
  }
  return cur;
}

/** `name[0]`, `name[-1][2]`, `[3]`: a field name followed by one or more array indexes. */
const INDEXED_SEGMENT = /^([^[\]]*)((?:\[-?\d+\])+)$/;

export function itemsOf(body: unknown, itemsPath?: string): unknown[] {
  if (itemsPath) {
    const v = getPath(body, itemsPath);
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new PaginationError(`itemsPath "${itemsPath}" is not an array in the response (got ${typeof v})`);
    return v;
  }
  if (Array.isArray(body)) return body;
  if (body === null || typeof body !== 'object') return [];
  let first: [string, unknown[]] | undefined;
  for (const [field, v] of Object.entries(body)) {
    if (!Array.isArray(v)) continue;
    if (first === undefined) {
      if (v.length > 0) return v;
      first = [field, v];
    } else if (v.length > 0) {
      // `{ warnings: [], data: [...] }`: taking the empty list ended the fetch as if no records
      // were left, and a since checkpoint advanced past the ones under the other field.
      throw new PaginationError(
        `the page's first list "${first[0]}" is empty but "${field}" holds ${v.length} item${v.length === 1 ? '' : 's'}: ` +
          `say which list holds the records with itemsPath: "${field}"`,
      );
    }
  }
  return first?.[1] ?? [];
}

function itemsOfLastPage(body: unknown, itemsPath?: string): unknown[] {
  // Only a list missing where itemsPath points is forgiven: an ambiguous page is still refused.
  if (itemsPath === undefined) return itemsOf(body);
  try {
    return itemsOf(body, itemsPath);
  } catch (e) {
    if (e instanceof PaginationError) return [];
    throw e;
  }
}

/** The next cursor as a string, or undefined when absent, null or empty. */
export function nextCursor(plan: PaginationPlan, body: unknown): string | undefined {
  const v = getPath(body, plan.cursorPath ?? '');
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'object') throw new PaginationError(`cursor at "${plan.cursorPath}" is an ${Array.isArray(v) ? 'array' : 'object'}, expected a string or number`);
  const s = String(v);
  return s === '' ? undefined : s;
}

export function hasMore(plan: PaginationPlan, body: unknown, items: unknown[]): boolean {
  switch (plan.strategy) {
    case 'offset':
    case 'page':
      return items.length >= plan.pageSize!;
    case 'cursor':
      return nextCursor(plan, body) !== undefined;
    default: {
      const never: never = plan.strategy;
      throw new PaginationError(`unknown pagination strategy ${String(never)}`);
    }
  }
}

export interface PageInfo {
  index: number;
  query: QueryParams;
  body: unknown;
  items: unknown[];
  /** The cursor for the next page (cursor strategy). */
  cursor?: string;
  /** True when this is the last page that will be fetched. */
  done: boolean;
  /** True when the mission's `until` held on this page (so it is the last). */
  until?: boolean;
}

export interface PaginationCallbacks {
  /** Fetches one page; `query` holds only the pagination parameters. Returns the parsed body. */
  fetchPage(query: QueryParams, index: number): Promise<unknown>;
  /**
   * How a page is named in errors, e.g. `GET https://api.example.com/items?page=3` (the caller
   * knows the URL); `query` holds only the pagination parameters.
   */
  describe?(query: QueryParams, index: number): string;
  /** A doubt worth a line on the run's output that does not stop the pagination. */
  warn?(message: string): void;
  /** The mission's `until`, evaluated with `response` = this page's body. */
  until?(body: unknown, index: number): boolean | Promise<boolean>;
  /** Called after each kept page (for `page.completed` journaling, backfill, streaming). */
  onPage?(info: PageInfo): void | Promise<void>;
  /**
   * false: do not gather the pages' items into `result.items` (it stays empty; `result.count`
   * still counts them) — a caller that streams each page from `onPage` holds one page at a time.
   */
  collect?: boolean;
}

export type StopReason = 'exhausted' | 'until' | 'max-pages' | 'max-items';

export interface PaginationResult {
  /** Every kept item, in order (empty when the caller streams: `collect: false`). */
  items: unknown[];
  /** How many items were kept. */
  count: number;
  pages: number;
  truncated: boolean;
  stoppedBy: StopReason;
  /** Position to resume from (next page index and cursor), useful for backfill. */
  next: { index: number; cursor?: string };
}

export interface PaginationStart {
  /** Resume from this page index (backfill). */
  index?: number;
  cursor?: string;
}

export async function paginate(
  plan: PaginationPlan,
  callbacks: PaginationCallbacks,
  start: PaginationStart = {},
): Promise<PaginationResult> {
  validatePlan(plan);
  const maxPages = plan.maxPages ?? DEFAULT_MAX_PAGES;
  const maxItems = plan.maxItems ?? Infinity;
  const collect = callbacks.collect ?? true;
  const items: unknown[] = [];
  let count = 0;
  const seenCursors = new Set<string>();
  let index = start.index ?? 0;
  let cursor = start.cursor;
  let pages = 0;
  if (cursor !== undefined) seenCursors.add(cursor);
  /** Whether any page of this walk (or the one it resumes after) had a cursor at cursorPath. */
  let cursorFound = cursor !== undefined;
  /** The previous full page of an offset or page pagination, to tell an API that ignores `param`. */
  let previous: PageShape | undefined;
  /** The top-level field the first page with items had them under (without itemsPath). */
  let listField: string | undefined;
  /** Where the previous page of this walk held its list (undefined on the first page). */
  let listedAt: ListPlace | undefined;

  for (;;) {
    if (pages >= maxPages) {
      return { items, count, pages, truncated: true, stoppedBy: 'max-pages', next: { index, ...(cursor !== undefined ? { cursor } : {}) } };
    }
    const query = pageQuery(plan, index, cursor);
    const body = await callbacks.fetchPage(query, index);
    pages += 1;
    const stop = callbacks.until ? await callbacks.until(body, index) : false;
    if (!stop && listedAt !== undefined) refuseListless(body, listedAt, index, () => callbacks.describe?.(query, index));
    listedAt = listPlace(body, plan.itemsPath) ?? listedAt;
    // The page `until` stops on may be an end marker holding no list where itemsPath points.
    const pageItems = stop ? itemsOfLastPage(body, plan.itemsPath) : itemsOf(body, plan.itemsPath);
    listField = checkListField(body, pageItems, listField, index, plan.itemsPath);
    const more = !stop && hasMore(plan, body, pageItems);
    const next = plan.strategy === 'cursor' && more ? nextCursor(plan, body) : undefined;
    if (plan.strategy === 'cursor' && !stop && !more && !cursorFound) warnNoCursor(plan, body, pageItems, index, () => callbacks.describe?.(query, index), callbacks.warn);
    if (next !== undefined) {
      cursorFound = true;
      if (seenCursors.has(next)) {
        throw new PaginationError(`the API returned cursor ${JSON.stringify(next)} again on page ${index + 1}; stopping instead of looping`);
      }
      seenCursors.add(next);
    }
    if (plan.strategy !== 'cursor' && more) {
      // An API that does not read the page's parameter (misspelt in the mission, or not one the
      // API knows) answers every page with the first: the fetch went on to the page limit —
      // 10,000 requests by default — and ended "completed" with one page's records.
      const shape = pageShape(pageItems);
      if (previous !== undefined && sameShape(previous, shape)) {
        throw new PaginationError(
          `the API answered page ${index + 1} (${plan.param}=${pageQuery(plan, index, undefined).find(([k]) => k === plan.param)?.[1]}) with the same ${pageItems.length} items as page ${index}; ` +
            `it does not seem to read "${plan.param}" — check the parameter name the API pages by; stopping instead of asking for the same page again`,
        );
      }
      previous = shape;
    }
    const room = maxItems - count;
    const kept = pageItems.length > room ? pageItems.slice(0, room) : pageItems;
    // A loop, not push(...kept): spreading a huge page would overflow the call stack.
    if (collect) for (const item of kept) items.push(item);
    count += kept.length;
    const hitItems = count >= maxItems && (more || kept.length < pageItems.length);
    const done = !more || hitItems || pages >= maxPages;
    await callbacks.onPage?.({ index, query, body, items: kept, ...(next !== undefined ? { cursor: next } : {}), done, ...(stop ? { until: true } : {}) });
    index += 1;
    cursor = next;
    if (hitItems) {
      return { items, count, pages, truncated: true, stoppedBy: 'max-items', next: { index, ...(cursor !== undefined ? { cursor } : {}) } };
    }
    if (stop) return { items, count, pages, truncated: false, stoppedBy: 'until', next: { index } };
    if (!more) return { items, count, pages, truncated: false, stoppedBy: 'exhausted', next: { index } };
  }
}

/**
 * The list field so far (see `listField` in paginate), after checking this page against it: a page
 * whose field holds a non-empty object instead of a list is refused. PHP sends a list
 * with gaps as an object (`{ "2": {…}, "5": {…} }`): such a page had no list, so pagination ended
 * there as at the last page, and the pages after it were never asked for.
 */
function checkListField(body: unknown, items: unknown[], field: string | undefined, index: number, itemsPath: string | undefined): string | undefined {
  if (itemsPath !== undefined || body === null || typeof body !== 'object' || Array.isArray(body)) return field;
  const page = body as Record<string, unknown>;
  if (field === undefined) {
    if (items.length === 0) return undefined;
    for (const [name, value] of Object.entries(page)) if (value === items) return name;
    return undefined;
  }
  const value = Object.prototype.hasOwnProperty.call(page, field) ? page[field] : undefined;
  // Nothing, null, an empty object or a scalar holds no records: that page ends the pagination as before.
  if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length === 0) return field;
  throw new PaginationError(
    `page ${index + 1} has an object under "${field}", where the pages before it had their list: ` +
      `stopping instead of taking it for the last page (an object keyed "0", "1", … is how PHP sends a list with gaps)`,
  );
}

/**
 * A full page of a cursor pagination no page of which had anything at cursorPath: a misspelt
 * path (`"meta.nxt"` for `meta.next`) ended the fetch after one page, in a run that completed
 * without a word. Said, not refused: an API may leave the cursor out of a last page that happens
 * to be full (Google's nextPageToken). A cursor present but null or empty is a clear end: silent.
 */
function warnNoCursor(plan: PaginationPlan, body: unknown, items: unknown[], index: number, describe: () => string | undefined, warn?: (message: string) => void): void {
  if (warn === undefined || plan.pageSize === undefined || items.length < plan.pageSize) return;
  const path = plan.cursorPath!;
  if (getPath(body, path) !== undefined) return;
  const where = describe();
  warn(
    `page ${index + 1}${where ? ` (${where})` : ''} is full (${items.length} items) but has nothing at the cursor path "${path}", so it was taken for the last page; ` +
      `${fieldsNear(body, path)}. If the path is misspelt, correct it in cursor(${plan.param}, ${plan.pageSize}, "…"); if the API leaves the cursor out of a full last page, nothing is wrong`,
  );
}

/** The fields of the deepest object on `path` that the body has: `"meta" has: next, count`. */
function fieldsNear(body: unknown, path: string): string {
  const parts = path.split('.');
  for (let k = parts.length - 1; k >= 0; k--) {
    const prefix = parts.slice(0, k).join('.');
    const v = k === 0 ? body : getPath(body, prefix);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) continue;
    const keys = Object.keys(v);
    const listed = keys.length === 0 ? 'no fields' : keys.slice(0, 12).join(', ') + (keys.length > 12 ? ', …' : '');
    return k === 0 ? `the page has: ${listed}` : `"${prefix}" has: ${listed}`;
  }
  return `the page is ${describeBody(body)}`;
}

/** Where a page held its list: at itemsPath, as the body itself, or under a top-level field. */
type ListPlace = { kind: 'path'; path: string } | { kind: 'body' } | { kind: 'field'; name: string };

function listPlace(body: unknown, itemsPath: string | undefined): ListPlace | undefined {
  if (itemsPath !== undefined) return { kind: 'path', path: itemsPath };
  if (Array.isArray(body)) return { kind: 'body' };
  if (body === null || typeof body !== 'object') return undefined;
  for (const [name, value] of Object.entries(body)) if (Array.isArray(value)) return { kind: 'field', name };
  return undefined;
}

/**
 * A page asked for because the one before it said more were left, whose list is absent where
 * that page had it: `{ "error": "rate limited" }` answered with 200, or an envelope without its
 * list. It held no items, so pagination ended there as at the last page, and the run completed
 * with the pages before it only. An empty body (204), `null` or an empty list there is still the
 * end; so is a page `until` holds on (the caller does not ask).
 */
function refuseListless(body: unknown, expected: ListPlace, index: number, describe: () => string | undefined): void {
  if (body === null || body === undefined) return;
  let missing: string;
  let hint = 'until: …';
  switch (expected.kind) {
    case 'path':
      if (getPath(body, expected.path) !== undefined) return;
      missing = `has no list at itemsPath "${expected.path}"`;
      hint = `until: not exists(response.${expected.path})`;
      break;
    case 'body':
      if (Array.isArray(body)) return;
      missing = 'is not a list, as the pages before it were';
      break;
    case 'field':
      // A list under another field is still a list (its items are taken, as before): only a page with none is refused.
      if (typeof body === 'object' && (Object.prototype.hasOwnProperty.call(body, expected.name) || listPlace(body, undefined) !== undefined)) return;
      missing = `has no "${expected.name}" list, which the pages before it had`;
      hint = `until: not exists(response.${expected.name})`;
      break;
    default: {
      const never: never = expected;
      throw new PaginationError(`unknown list place ${JSON.stringify(never)}`);
    }
  }
  const where = describe();
  const fields = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
  throw new PaginationError(
    `page ${index + 1}${where ? ` (${where})` : ''} ${missing}; it has: ${fields.length > 0 ? fields.slice(0, 12).join(', ') + (fields.length > 12 ? ', …' : '') : describeBody(body)} (${excerpt(body)}). ` +
      `An in-band error, or an envelope without its list, is not taken for the last page: the pages after it would be missing from a run that completed. ` +
      `Run the mission again once the API answers; if this is how the API marks its last page, say so with \`${hint}\``,
  );
}

function describeBody(body: unknown): string {
  if (Array.isArray(body)) return 'a list';
  return typeof body === 'object' ? 'no fields' : `a ${typeof body}`;
}

/** The page's JSON, cut to 200 characters (the client redacted its secret values already). */
function excerpt(body: unknown): string {
  const text = JSON.stringify(body) ?? String(body);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** What tells two full pages apart cheaply: their length and their first and last items' JSON. */
interface PageShape {
  length: number;
  first: string;
  last: string;
}

function pageShape(items: readonly unknown[]): PageShape {
  return { length: items.length, first: JSON.stringify(items[0]) ?? '', last: JSON.stringify(items[items.length - 1]) ?? '' };
}

function sameShape(a: PageShape, b: PageShape): boolean {
  return a.length === b.length && a.length > 0 && a.first === b.first && a.last === b.last;
}

/**
 * Why a paginated fetch stopped with pages left, for its progress line: a limit the mission set,
 * or the default page limit it never asked for — which must not pass for a finished sync.
 */
export function describeTruncation(stoppedBy: StopReason, limits: { maxPages?: number; maxItems?: number }, hasSince: boolean): string {
  const limit =
    stoppedBy === 'max-items'
      ? `truncated at maxItems ${limits.maxItems}`
      : limits.maxPages === undefined
        ? `truncated: stopped at the default limit of ${DEFAULT_MAX_PAGES} pages with more left — set maxPages to fetch further`
        : `truncated at maxPages ${limits.maxPages}`;
  return hasSince ? `${limit}; the since checkpoint does not advance` : limit;
}
