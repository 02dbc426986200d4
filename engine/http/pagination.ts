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
 * is full (`items.length >= N`); cursor while the next cursor is present and neither null, `false`
 * nor "" (an integer beyond 2^53 — its digits lost in parsing — fails the fetch, never sent).
 *
 * Invariants: `until` (evaluated by the caller, who has the evaluator) sees each page's raw body
 * before its items are kept; a page that satisfies it is the last one: its items are kept (it is
 * the last page, as `until: response.has_more == false` says, not a page past the end) and no
 * further page is asked for. Hitting `maxPages`
 * (default 10 000) or `maxItems` (default unlimited) while more pages exist marks the result
 * `truncated` (a truncated sync must not advance its checkpoint); a cursor that repeats is an
 * error, not an endless loop. What a page must look like before its items are taken — no in-band
 * error, no object for a list, no short page that says more follow — and the warning for a cursor
 * path no page has, are `page-checks.ts`: a page that fails them is never taken for the last.
 */

import { getPath } from './json-path.js';
import {
  checkListField,
  describesPage,
  errorFieldOf,
  refuseErrorPage,
  refuseLostDigitsCursor,
  refuseShortPageWithMore,
  refuseFailedEmptyPage,
  saysLast,
  refuseOverlongOffsetPage,
  warnNoCursor,
  recordsElsewhere,
  refuseNotFirstPage,
  refuseSkippedFirstPage,
  warnRecordsElsewhere,
  withoutErrorFields,
} from './page-checks.js';
import { PaginationError } from './pagination-error.js';
import type { QueryParams } from './request-builder.js';

export { getPath } from './json-path.js';
export { PaginationError } from './pagination-error.js';

export type PageStrategy = 'offset' | 'page' | 'cursor';

export interface PaginationPlan {
  strategy: PageStrategy;
  param: string;
  /** Absent only for a cursor pagination that sends no size (no sizeParam). */
  pageSize?: number;
  /** cursor only: dotted path of the next cursor in each page. */
  cursorPath?: string;
  sizeParam?: string;
  /** page only: the number of the first page (default 1; 0 for an API that counts from 0). */
  firstPage?: number;
  itemsPath?: string;
  maxPages?: number;
  maxItems?: number;
}

export const DEFAULT_MAX_PAGES = 10_000;

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
      out.push([plan.param, String(index + (plan.firstPage ?? 1))]);
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
  const fields = Object.entries(body);
  // Beside another list, a list of links or warnings is never the records (Spring HATEOAS without
  // HAL puts its `links` first: its self link was stored as a record); alone, it is (`GET /warnings`).
  const lists = fields.filter(([, v]) => Array.isArray(v)).length;
  for (const [field, v] of fields) {
    if (!Array.isArray(v) || (lists > 1 && describesPage(field, v))) continue;
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

/**
 * The next cursor as a string, or undefined when absent, null, `false` or empty — `"next": false`
 * says there is none, as it does for a page walk's next link (page-checks.ts); it was sent as
 * `?cursor=false`. A number that is an integer beyond 2^53 is refused (refuseLostDigitsCursor).
 */
export function nextCursor(plan: PaginationPlan, body: unknown): string | undefined {
  const v = getPath(body, plan.cursorPath ?? '');
  if (v === undefined || v === null || v === false) return undefined;
  if (typeof v === 'object') throw new PaginationError(`cursor at "${plan.cursorPath}" is an ${Array.isArray(v) ? 'array' : 'object'}, expected a string or number`);
  refuseLostDigitsCursor(plan, body, undefined, () => undefined);
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
  /** The next page a page's answer names outside its body (its Link header's rel="next"), if any. */
  linkedNext?(index: number): string | undefined;
  /** The records a page's answer counts outside its body (its X-Total-Count header), if it does. */
  headerTotal?(index: number): number | undefined;
  /** The page-end rules of log format 9 (events.ts PAGE_END_RULES_FORMAT): a run recorded before keeps its own. */
  pageEndRules?: boolean;
  /** Log format 10 (events.ts PAGE_SIGNAL_FORMS_FORMAT): flags and counts sent as text, and the other in-band error forms (page-checks.ts). */
  signalForms?: boolean;
  /** The mission's `until`, evaluated with `response` = this page's body. */
  until?(body: unknown, index: number): boolean | Promise<boolean>;
  /**
   * `until` held on a page that by itself says more may follow (a full page, a next cursor):
   * the caller may refuse an `until` that held there by mistake (throws to fail the walk).
   */
  untilEndsEarly?(body: unknown, index: number, records: number): void;
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
  /**
   * The list that looks like where the records are, when they were taken from another (the
   * page's first list, `recordsElsewhere`): the records are in doubt, so a since checkpoint must
   * not pass them.
   */
  recordsElsewhere?: string;
}

export interface PaginationStart {
  /** Resume from this page index (backfill, or finished pages taken as recorded). */
  index?: number;
  cursor?: string;
  /**
   * The body of the page before `index` when that page was taken as recorded rather than walked
   * (Journal.skipFinishedPages): the check that holds a page against the one before it (an API
   * repeating the same page) starts from it, as it would after walking it.
   */
  previousBody?: unknown;
  /**
   * Of the pages before `index` taken as recorded, the body of the first that named the list
   * field (listFieldOf): later pages are held to its field, as a walk of them all holds them.
   */
  listBody?: unknown;
  /**
   * Pages and items of this fetch before `index`, taken as recorded: `maxPages` and `maxItems`
   * count them (a fetch resumed after a crash went `maxPages` further than where it stopped).
   */
  pagesBefore?: number;
  itemsBefore?: number;
}

/**
 * The top-level field a page's records sit under, as the first page with records names it for
 * the pages after it (without itemsPath; undefined when the page names none).
 */
export function listFieldOf(body: unknown, itemsPath: string | undefined): string | undefined {
  return checkListField(body, itemsOf(body, itemsPath), undefined, 0, itemsPath);
}

export async function paginate(
  plan: PaginationPlan,
  callbacks: PaginationCallbacks,
  start: PaginationStart = {},
): Promise<PaginationResult> {
  validatePlan(plan);
  // This walk's share of the limits: the pages and items before it count too.
  const maxPages = (plan.maxPages ?? DEFAULT_MAX_PAGES) - (start.pagesBefore ?? 0);
  const maxItems = (plan.maxItems ?? Infinity) - (start.itemsBefore ?? 0);
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
  /** The list the first page's records look to be in, when they were taken from another. */
  let inDoubt: string | undefined;
  const pageEndRules = callbacks.pageEndRules === true;
  const signalForms = callbacks.signalForms === true;
  if (index > 0) {
    if (start.listBody !== undefined) listField = listFieldOf(start.listBody, plan.itemsPath);
    if (start.listBody !== undefined && listField !== undefined) inDoubt = recordsElsewhere(start.listBody, listField)?.[0];
    if (start.previousBody !== undefined && plan.strategy !== 'cursor') previous = pageShape(itemsOf(start.previousBody, plan.itemsPath));
  }

  for (;;) {
    if (pages >= maxPages) {
      // A limit the mission never set is no place for a sync to end: the API pages without end
      // (a cursor new each time, pages that differ but never run out) or holds more than it was
      // thought to. Ending "completed" on it passed a cut-off sync for a finished one.
      if (plan.maxPages === undefined) {
        throw new PaginationError(
          `stopped at the default limit of ${DEFAULT_MAX_PAGES} pages with more left: the API may page without end, or hold more than that — set maxPages to fetch further (or to say where the fetch may stop)`,
        );
      }
      return { items, count, pages, truncated: true, stoppedBy: 'max-pages', next: { index, ...(cursor !== undefined ? { cursor } : {}) }, ...inDoubtOf(inDoubt) };
    }
    const query = pageQuery(plan, index, cursor);
    const body = await callbacks.fetchPage(query, index);
    pages += 1;
    const stop = callbacks.until ? await callbacks.until(body, index) : false;
    const describe = () => callbacks.describe?.(query, index);
    const errorField = errorFieldOf(body, plan.itemsPath, signalForms);
    // An error page is the end only where the mission's `until` says so by the error itself
    // (`until: exists(response.error)`): one that holds for any empty page (`length(response.items)
    // == 0`) also holds for a rate-limit answer, which must not end a walk short.
    if (errorField !== undefined && !(stop && !(await holdsWithoutError(callbacks.until!, body as Record<string, unknown>, index, errorField)))) {
      refuseErrorPage(body, errorField, index, describe);
    }
    // The page `until` stops on may be an end marker holding no list where itemsPath points.
    const pageItems = stop ? itemsOfLastPage(body, plan.itemsPath) : itemsOf(body, plan.itemsPath);
    const firstListField = listField === undefined;
    listField = checkListField(body, pageItems, listField, index, plan.itemsPath, stop);
    if (firstListField && listField !== undefined) inDoubt = warnRecordsElsewhere(body, listField, index, describe, callbacks.warn);
    if (pageEndRules && !stop) refuseFailedEmptyPage(body, pageItems, index, describe, signalForms);
    if (plan.strategy === 'cursor' && !stop) refuseLostDigitsCursor(plan, body, index, describe);
    refuseNotFirstPage(plan, body, index, describe, signalForms);
    if (stop && callbacks.untilEndsEarly && pageItems.length > 0 && hasMore(plan, body, pageItems)) callbacks.untilEndsEarly(body, index, pageItems.length);
    const carriesMore = !stop && hasMore(plan, body, pageItems);
    // Format 9: a page that says it is the last ends a cursor walk, whatever cursor it carries.
    const endsHere = carriesMore && pageEndRules && plan.strategy === 'cursor' && saysLast(body, signalForms);
    if (endsHere) cursorFound = true;
    const more = carriesMore && !endsHere;
    const next = plan.strategy === 'cursor' && more ? nextCursor(plan, body) : undefined;
    if (plan.strategy === 'cursor' && !stop && !more && !cursorFound) warnNoCursor(plan, body, pageItems, index, describe, callbacks.warn);
    if (!stop && !more) {
      // The skipped first page first: its short last page says more follow too (Algolia's nbHits).
      const says = { linkedNext: callbacks.linkedNext?.(index), headerTotal: pageEndRules ? callbacks.headerTotal?.(index) : undefined, pageEndRules, signalForms };
      refuseSkippedFirstPage(plan, body, pageItems.length, index, describe, says);
      refuseShortPageWithMore(plan, body, pageItems, index, describe, says);
    }
    if (!stop && more) refuseOverlongOffsetPage(plan, pageItems, index, describe);
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
      return { items, count, pages, truncated: true, stoppedBy: 'max-items', next: { index, ...(cursor !== undefined ? { cursor } : {}) }, ...inDoubtOf(inDoubt) };
    }
    if (stop) return { items, count, pages, truncated: false, stoppedBy: 'until', next: { index }, ...inDoubtOf(inDoubt) };
    if (!more) return { items, count, pages, truncated: false, stoppedBy: 'exhausted', next: { index }, ...inDoubtOf(inDoubt) };
  }
}

/**
 * Whether `until` still holds on an error page with its error fields taken out. An `until` that
 * fails to evaluate without them (`response.error.code == 5`) reads the error: it does not hold.
 */
async function holdsWithoutError(until: NonNullable<PaginationCallbacks['until']>, body: Record<string, unknown>, index: number, field: string): Promise<boolean> {
  try {
    return await until(withoutErrorFields(body, field), index);
  } catch {
    return false;
  }
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
 * Why a paginated fetch stopped with pages left, for its progress line: a limit the mission set
 * (the default page limit fails the fetch instead: `paginate`).
 */
function inDoubtOf(field: string | undefined): Pick<PaginationResult, 'recordsElsewhere'> {
  return field === undefined ? {} : { recordsElsewhere: field };
}

export function describeTruncation(stoppedBy: StopReason, limits: { maxPages?: number; maxItems?: number }, hasSince: boolean): string {
  const limit = stoppedBy === 'max-items' ? `truncated at maxItems ${limits.maxItems}` : `truncated at maxPages ${limits.maxPages}`;
  return hasSince ? `${limit}; the since checkpoint does not advance` : limit;
}
