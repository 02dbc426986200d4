/**
 * What a page of a paginated fetch must look like before its items are taken (pagination.ts), each
 * rule written after a run that completed with records missing and not a word:
 *
 * - `refuseErrorPage`: any page answered 2xx with an in-band error and no list but the error's
 *   (`{ "error": "rate limited" }`) fails the fetch — it was an empty last page, or its errors
 *   records — unless the mission's `until` names it as the end (`until: exists(response.error)`).
 *
 * A page holding no list and no error (`{}`, `{ "data": null }`, an envelope that leaves an empty
 * list out — proto3, Spring's HAL — `{ "message": "page out of range" }`) is an empty page: it ends
 * a walk whose next page it does not name, as `[]` does. Refusing such pages (briefly, on
 * 2026-12-02) failed a mission on the night its row count landed on a multiple of the page size.
 * - `checkListField`: a list field that holds an object (PHP's list with gaps) is refused, and so
 *   is a page with no list whose records are an object keyed by index or sit below its top
 *   (`result.items`, HAL's `_embedded.people`): those are no empty pages.
 * - `warnRecordsElsewhere`: records taken from a first list with an unusual name (`facets`) while
 *   a later one has a usual one (`results`) are said, not refused (itemsPath settles it).
 * - `warnNoCursor`: a full first page with nothing at the cursor path is said (a misspelt path),
 *   not refused (an API may leave the cursor out of a full last page).
 * - `refuseLostDigitsCursor`: a next cursor that is a JSON integer beyond 2^53 (Twitter's
 *   `next_cursor`) has lost its last digits in parsing: sent, it names another page (or none, and
 *   the walk ended with records missing), so the fetch fails instead, naming its string form.
 * - `refuseShortPageWithMore`: a page of an offset or page walk shorter than the page size the
 *   mission gave, that says itself more pages follow, is no last page: the API pages by a size of
 *   its own (one it caps the asked size at, or its default where the mission sends none).
 *
 * - `refuseOverlongOffsetPage`: a page of an offset walk holding more items than the page size,
 *   with more to come: the API ignores the size, so the next offset (this one + the size) asks for
 *   records this page holds — taken twice (`response` held 20 duplicates of 45, a `for` over it
 *   POSTed them twice) — so the fetch fails, naming the size the API pages by.
 *
 * Messages name the page, its URL (the caller's `describe`), what was expected and what the page had.
 */
import { lostDigits, lostDigitsText } from '../eval/path-template.js';
import { isPlainObject } from '../eval/values.js';
import { getPath } from './json-path.js';
import { PaginationError } from './pagination-error.js';
import type { PaginationPlan } from './pagination.js';

/**
 * The list field so far (see `listField` in paginate), after checking this page against it: a page
 * whose field holds a non-empty object instead of a list is refused. PHP sends a list
 * with gaps as an object (`{ "2": {…}, "5": {…} }`): such a page had no list, so pagination ended
 * there as at the last page, and the pages after it were never asked for.
 */
/**
 * A page with no list of records at all, whose field holds a non-empty object of records keyed
 * "0", "2", … (PHP's list with gaps), or whose records sit below its top (`{ "result": { "items":
 * […] } }`, Spring HAL's `_embedded.people`). Taken for an empty page, it ended the walk with
 * none of its records, the run completed and its `since` checkpoint passed them. (Pages after a
 * list are checked against that list's field, below; a page with an empty list, or with no
 * records anywhere, is the empty page it may well be.)
 */
function refuseRecordsNotInList(page: Record<string, unknown>, index: number, stop: boolean): void {
  let gapped: string | undefined;
  let list = false;
  for (const [name, value] of Object.entries(page)) {
    if (Array.isArray(value)) {
      // A list with items is the page's records; an empty one is the page's empty list of
      // records, unless it is an empty `errors: []` beside them. Links and warnings are neither.
      if (describesPage(name, value)) continue;
      if (value.length > 0) return;
      if (!NOT_RECORD_ENVELOPES.has(name.toLowerCase())) list = true;
    } else if (gapped === undefined && isKeyedRecords(name, value)) {
      gapped = name;
    }
  }
  // A page that counts no records holds none, whatever its fields look like.
  const none = RECORD_TOTALS.some((path) => getPath(page, path) === 0);
  if (gapped !== undefined && !none) throw gappedListError(index, gapped);
  if (list || none) return;
  const nested = nestedRecords(page);
  if (nested === undefined) return;
  throw new PaginationError(
    `page ${index + 1} has no list at its top, but "${nested[0]}" holds ${nested[1]} record${nested[1] === 1 ? '' : 's'}: ` +
      `stopping instead of taking it for an empty page; say where the records are with itemsPath: "${nested[0]}"`,
  );
}

function gappedListError(index: number, field: string): PaginationError {
  return new PaginationError(
    `page ${index + 1} has no list of records, but an object of records keyed by index under "${field}" (how PHP sends a list with gaps): ` +
      `stopping instead of taking it for an empty page; have the API send a list, or fetch without paginate and take the records with values()`,
  );
}

/**
 * An object of records keyed by list index (isIndexedRecords), or, under `data` (where PHP's
 * paginators put their list), keyed by any integers: a list filtered down to a few far-apart
 * indices. Under another name an object keyed by ids or years is as often what it looks like
 * (side-loaded records by id beside the page's list, a histogram).
 */
function isKeyedRecords(name: string, value: unknown): boolean {
  return isIndexedRecords(value, name.toLowerCase() === 'data' ? Infinity : undefined) && !keyedByYears(value as Record<string, unknown>);
}

/** `{ "2023": {…}, "2024": {…} }`: years, not a list's indices. */
function keyedByYears(value: Record<string, unknown>): boolean {
  return Object.keys(value).every((key) => /^(1[89]|2[01])[0-9]{2}$/.test(key));
}

/**
 * An object of records keyed by list index: every key an index, every value a record, the indices
 * no further apart than a filtered list leaves them (the largest below 4 × their count + 16,
 * unless `spread` says otherwise). Years (`{ "2023": {…}, "2024": {…} }`) or ids are keys of another kind.
 */
function isIndexedRecords(value: unknown, spread?: number): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  if (entries.length === 0) return false;
  let largest = 0;
  for (const [key, item] of entries) {
    if (!/^(0|[1-9][0-9]{0,8})$/.test(key) || item === null || typeof item !== 'object' || Array.isArray(item)) return false;
    largest = Math.max(largest, Number(key));
  }
  return largest < (spread ?? 4 * entries.length + 16);
}

/** How deep below the page's top records are looked for (`_embedded.people` is two down, GraphQL's `data.viewer.repositories.nodes` four). */
const NESTED_DEPTH = 5;

/** HAL's field of embedded records (`_embedded.people`): any list right under it is records. */
const EMBEDDED = new Set(['_embedded', 'embedded']);

/** Fields of a page that say something about it, never wrap its records (an error's details, a filter list). */
const NOT_RECORD_ENVELOPES = new Set(['error', 'errors', 'warning', 'warnings', 'message', 'messages', 'meta', 'links', '_links', 'debug', 'facets', 'aggregations', 'filters']);

/**
 * The first non-empty list of records (objects) inside an object field of the page: its path and
 * length. Only a list under a name records go by (RECORD_LISTS: `result.items`, OData v2's
 * `d.results`, GraphQL's `data.viewer.repositories.nodes`) or right under HAL's `_embedded`: an
 * empty report's `summary.by_status` or `data.totals`, a search's echoed `query.filters` or a
 * `user.orgs` beside no records are no records of the page.
 */
function nestedRecords(page: Record<string, unknown>): [string, number] | undefined {
  let level: Array<[string, Record<string, unknown>]> = Object.entries(page).flatMap(([name, v]) =>
    isPlainObject(v) && !NOT_RECORD_ENVELOPES.has(name.toLowerCase()) ? [[name, v] as [string, Record<string, unknown>]] : [],
  );
  for (let depth = 1; depth < NESTED_DEPTH && level.length > 0; depth++) {
    const next: Array<[string, Record<string, unknown>]> = [];
    for (const [at, object] of level) {
      for (const [name, value] of Object.entries(object)) {
        const path = `${at}.${name}`;
        if (Array.isArray(value)) {
          const named = RECORD_LISTS.has(name.toLowerCase()) || NESTED_RECORD_LISTS.has(name.toLowerCase()) || EMBEDDED.has(at.toLowerCase());
          if (named && value.some(isPlainObject)) return [path, value.length];
        } else if (isPlainObject(value)) {
          next.push([path, value]);
        }
      }
    }
    level = next;
  }
  return undefined;
}

export function checkListField(body: unknown, items: unknown[], field: string | undefined, index: number, itemsPath: string | undefined, stop = false): string | undefined {
  if (itemsPath !== undefined || body === null || typeof body !== 'object' || Array.isArray(body)) return field;
  const page = body as Record<string, unknown>;
  if (field === undefined) {
    if (items.length === 0) {
      refuseRecordsNotInList(page, index, stop);
      return undefined;
    }
    const taken = Object.entries(page).find(([, value]) => value === items)?.[0];
    // Laravel's paginator with a gapped `data` object: its first list is its own `links`.
    if (taken !== undefined && NOT_RECORD_ENVELOPES.has(taken.toLowerCase())) {
      const gapped = Object.entries(page).find(([name, value]) => name !== taken && RECORD_LISTS.has(name.toLowerCase()) && isKeyedRecords(name, value));
      if (gapped !== undefined) throw gappedListError(index, gapped[0]);
    }
    return taken;
  }
  const value = Object.prototype.hasOwnProperty.call(page, field) ? page[field] : undefined;
  // Nothing, null, an empty object or a scalar holds no records: that page ends the pagination as before.
  if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length === 0) return field;
  throw new PaginationError(
    `page ${index + 1} has an object under "${field}", where the pages before it had their list: ` +
      `stopping instead of taking it for the last page (an object keyed "0", "1", … is how PHP sends a list with gaps)`,
  );
}

/** Field names APIs put their records under. */
const RECORD_LISTS = new Set(['data', 'items', 'results', 'records', 'entries', 'rows', 'hits', 'nodes', 'values', 'objects', 'elements', 'list', 'content', 'features']);
/**
 * Names that hold records only below a page's top: Reddit's `data.children`, Solr's
 * `response.docs`, GraphQL relay's `data.orders.edges` (helper 73: each completed with no records).
 * At the top they are as often something else (a tree's `children`).
 */
const NESTED_RECORD_LISTS = new Set(['children', 'docs', 'documents', 'edges']);

/**
 * A list that says something about the page rather than holding its records: links (Mailchimp's
 * `_links: [{ rel, href }]`) or notices as text (Jira's `warningMessages: ["…"]`). Beside an empty
 * list of records it leaves that page empty. Decided by what the list holds as well as its name:
 * Slack's `messages` beside an empty `pinned` are records.
 */
export function describesPage(name: string, list: unknown[]): boolean {
  if (LINK_LISTS.has(name.toLowerCase())) return isLinkList(list);
  return NOTICE_NAME.test(name) && list.every((item) => typeof item === 'string');
}
const LINK_LISTS = new Set(['links', '_links']);
/**
 * Notices that leave a page what it is: warnings. Errors and bare messages beside an empty list are
 * an in-band failure as often (`{ "data": [], "errors": ["backend timed out"] }`, `"messages":
 * ["Rate limit exceeded"]`, Jira's `errorMessages`): refused, as a page of no records whose answer
 * is an error must not end a walk (helper 74).
 */
const NOTICE_NAME = /warning|notice/i;

/**
 * `[{ "rel": "self", "href": … }, …]`: a list of links (Mailchimp, PayPal, OGC API, Spring HATEOAS
 * without HAL) — each with its relation: `[{ "href", "title" }]` is as often a resource of links
 * (helper 76: its records were taken for none).
 */
function isLinkList(list: unknown[]): boolean {
  return list.length > 0 && list.every((item) => isPlainObject(item) && typeof item.href === 'string' && typeof item.rel === 'string');
}

/** The href of the `rel: "next"` entry of a page's list of links (`links`, `_links`), if it has one. */
function nextInLinkList(body: Record<string, unknown>): string | undefined {
  for (const name of LINK_LISTS) {
    const list = body[name];
    if (!Array.isArray(list) || !isLinkList(list)) continue;
    const next = list.find((link) => (link as { rel?: unknown }).rel === 'next') as { href: string } | undefined;
    if (next !== undefined && next.href !== '') return next.href;
  }
  return undefined;
}

/**
 * The first page's records were taken from its first list (as upstream does without itemsPath),
 * but that list's name is no usual name for records while a later list's is: `{ "facets": […],
 * "results": […] }` stored the facets as records, silently. Said, not refused: the first list may
 * well be the records (`{ "users": […], "data": […] }`); itemsPath settles it either way. Until it
 * does, the records are in doubt: the fetch's since checkpoint does not advance (fetch-step.ts),
 * or the records in that other list were passed for good. Returns that list's name.
 */
export function warnRecordsElsewhere(body: unknown, taken: string, index: number, describe: () => string | undefined, warn?: (message: string) => void): string | undefined {
  const other = recordsElsewhere(body, taken);
  if (other === undefined) return undefined;
  const where = describe();
  warn?.(
    `page ${index + 1}${where ? ` (${where})` : ''} holds several lists: its records were taken from "${taken}", the first, ` +
      `but "${other[0]}" (${other[1]} items) looks like where they are; say which with itemsPath: "${other[0]}" (itemsPath: "${taken}" silences this)`,
  );
  return other[0];
}

/** The non-empty list under a usual name for records, beside `taken` (no such name): its name and length. */
export function recordsElsewhere(body: unknown, taken: string): [string, number] | undefined {
  if (RECORD_LISTS.has(taken.toLowerCase()) || body === null || typeof body !== 'object') return undefined;
  const other = Object.entries(body as Record<string, unknown>).find(([name, v]) => name !== taken && RECORD_LISTS.has(name.toLowerCase()) && Array.isArray(v) && v.length > 0);
  return other === undefined ? undefined : [other[0], (other[1] as unknown[]).length];
}

/**
 * A full page of a cursor pagination no page of which had anything at cursorPath: a misspelt
 * path (`"meta.nxt"` for `meta.next`) ended the fetch after one page, in a run that completed
 * without a word. Said, not refused: an API may leave the cursor out of a last page that happens
 * to be full (Google's nextPageToken). A cursor present but null, false or empty is a clear end: silent.
 */
export function warnNoCursor(plan: PaginationPlan, body: unknown, items: unknown[], index: number, describe: () => string | undefined, warn?: (message: string) => void): void {
  if (warn === undefined || plan.pageSize === undefined || items.length < plan.pageSize) return;
  const path = plan.cursorPath!;
  if (getPath(body, path) !== undefined) return;
  const where = describe();
  warn(
    `page ${index + 1}${where ? ` (${where})` : ''} is full (${items.length} items) but has nothing at the cursor path "${path}", so it was taken for the last page; ` +
      `${fieldsNear(body, path)}. If the path is misspelt, correct it in cursor(${plan.param}, ${plan.pageSize}, "…"); if the API leaves the cursor out of a full last page, nothing is wrong`,
  );
}

/**
 * Fails the fetch where a page's next cursor is an integer beyond 2^53 (`lostDigits`):
 * `"next_cursor": 1489467234237774933` parses as 1489467234237774800, and `?cursor=1489467234237774800`
 * is a cursor the API never gave — Twitter answers an unknown cursor with an empty list, so the
 * walk ended there and the run completed with the rest missing. Never sent: the message names
 * the page, the cursor path and the string form beside it (`next_cursor_str`) when the page has one.
 * `index` undefined: the page is not known to the caller (`nextCursor` on its own).
 */
export function refuseLostDigitsCursor(plan: PaginationPlan, body: unknown, index: number | undefined, describe: () => string | undefined): void {
  const path = plan.cursorPath ?? '';
  const value = getPath(body, path);
  if (!lostDigits(value)) return;
  const where = index === undefined ? undefined : describe();
  const sibling = `${path}_str`;
  const size = plan.pageSize !== undefined ? `${plan.pageSize}, ` : '';
  const fix =
    typeof getPath(body, sibling) === 'string'
      ? `page by the string the API sends beside it: cursor(${plan.param}, ${size}"${sibling}")`
      : `page by the API's string form of the cursor (as Twitter sends next_cursor_str beside next_cursor), if it sends one`;
  throw new PaginationError(
    `${index === undefined ? 'the page' : `page ${index + 1}${where ? ` (${where})` : ''}`} names its next cursor at "${path}" as a number: ${lostDigitsText(value)}, ` +
      `so ${plan.param}=${value} would ask for a page the API never named (an unknown cursor may be answered with an empty list, ending the walk with records missing); not sent — ${fix}`,
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

/** Top-level fields an API answers an error in, when it answers one with a 2xx status. */
const ERROR_FIELDS = ['error', 'errors', 'fault'] as const;

/**
 * The field of a page answered with an in-band error and no list but the error's — `{ "error":
 * "rate limited" }`, Slack's `{ "ok": false, "error": "ratelimited" }`, `{ "errors": [{ … }] }`
 * with 200 — else undefined. Such a page was taken for an empty last page (on page 1, a run that
 * completed with no records and advanced its since checkpoint past them), or its errors were stored
 * as records. A page that holds a list beside the error (GraphQL's partial data) is a page; an
 * empty or null error is no error. `forms` (log format 10): the other forms too (otherErrorForm).
 */
export function errorFieldOf(body: unknown, itemsPath: string | undefined, forms = false): string | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const page = body as Record<string, unknown>;
  const field = ERROR_FIELDS.find((name) => Object.prototype.hasOwnProperty.call(page, name) && holdsSomething(page[name])) ?? (forms ? otherErrorForm(page) : undefined);
  if (field === undefined) return undefined;
  const listed = itemsPath !== undefined ? Array.isArray(getPath(body, itemsPath)) : Object.entries(page).some(([name, v]) => name !== field && Array.isArray(v));
  return listed ? undefined : field;
}

/**
 * Log format 10: the other ways APIs answer an error with a 2xx status, as the field that says so —
 * JSend's `status: "error"` / `"fail"`, AWS's `Error`, `errcode` / `error_code` other than 0, a
 * `statusCode` or numeric `code` of 400 or more. Before, such a page mid-walk was taken for an
 * empty last page: the run completed with the pages before it and its checkpoint moved past the rest.
 */
function otherErrorForm(page: Record<string, unknown>): string | undefined {
  const status = page['status'];
  if (typeof status === 'string' && /^(error|fail|failed|failure)$/i.test(status.trim())) return 'status';
  if (holdsSomething(page['Error'])) return 'Error';
  for (const name of ['errcode', 'error_code', 'errorCode']) {
    const code = signalValue(page[name], true);
    // 0, and the words APIs send for "no error" (`"errcode": "OK"`), are none.
    if (typeof code === 'number' ? code !== 0 : typeof code === 'string' && !/^\s*(0|ok|none|success|null)?\s*$/i.test(code)) return name;
  }
  for (const name of ['statusCode', 'code']) {
    const code = signalValue(page[name], true);
    if (typeof code === 'number' && code >= 400 && code < 600) return name;
  }
  return undefined;
}

/** The page without its error fields (those `errorFieldOf` reads, and `field`): what `until` is asked again, to tell whether the error is what makes it the end. */
export function withoutErrorFields(body: Record<string, unknown>, field?: string): Record<string, unknown> {
  const rest: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) if (!(ERROR_FIELDS as readonly string[]).includes(name) && name !== field) rest[name] = value;
  return rest;
}

/**
 * What a page's flag or count reads as. From log format 10 (`forms`) a flag or count sent as text
 * is read as what it says — `"has_more": "true"`, `"total_count": "5"`, `"ok": "false"` — and a
 * flag sent as 1 or 0 as true or false: before, only a JSON boolean or number counted, so a short
 * page saying `"has_more": "true"` ended the walk with the rest missing.
 */
function signalValue(value: unknown, forms: boolean): unknown {
  if (!forms || typeof value !== 'string') return value;
  const text = value.trim().toLowerCase();
  if (text === 'true') return true;
  if (text === 'false') return false;
  return /^\d{1,15}$/.test(text) ? Number(text) : value;
}

/**
 * Flags APIs send as 1 and 0 whose names say they are flags. Not `last`, `done`, `first`, `success`,
 * `succeeded` or `ok`: as numbers those are as often a 0-based page number or a count.
 */
const NUMERIC_FLAG_NAMES = new Set(['has_more', 'hasMore', 'has_next', 'hasNext', 'hasNextPage', 'is_last', 'isLast', 'is_last_page', 'isLastPage', 'end_of_stream', 'endOfStream']);

/** A flag at `path`: true, false, or undefined when it is neither (`forms`: as signalValue reads it, and 1 and 0 where the name says flag). */
function flagAt(body: unknown, path: string, forms: boolean): boolean | undefined {
  const value = signalValue(getPath(body, path), forms);
  if (value === true || value === false) return value;
  if (forms && (value === 1 || value === 0) && NUMERIC_FLAG_NAMES.has(path.slice(path.lastIndexOf('.') + 1))) return value === 1;
  return undefined;
}

/** A count at `path` (a whole number ≥ 0; `forms`: one sent as text too), else undefined. */
function countAt(body: unknown, path: string, forms: boolean): number | undefined {
  const value = signalValue(getPath(body, path), forms);
  return isCount(value) ? (value as number) : undefined;
}

/** Fails the fetch at a page `errorFieldOf` found an error in (the caller has let an end the mission names through). */
export function refuseErrorPage(body: unknown, field: string, index: number, describe: () => string | undefined): never {
  const where = describe();
  const value = (body as Record<string, unknown>)[field];
  // A resource named `errors` (an error tracker's) is records, not an error: say how to take it so.
  const records = Array.isArray(value) && value.length > 0 && value.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v));
  throw new PaginationError(
    `page ${index + 1}${where ? ` (${where})` : ''} answered with an error under "${field}" and no list: ${excerpt(body)}. ` +
      `Not taken for the last page (nor its error for records): run the mission again once the API answers. ` +
      `If the API marks its last page this way, say so with ${(ERROR_FIELDS as readonly string[]).includes(field) ? `\`until: exists(response.${field})\`` : `\`until: response.${field} == ${JSON.stringify(value)}\` (healthy pages have a ${field} too)`}` +
      (records ? `; if these are the records (a resource named ${field}), with \`itemsPath: "${field}"\`` : ''),
  );
}

function holdsSomething(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '' || value === 0) return false;
  if (Array.isArray(value)) return value.length > 0;
  return typeof value !== 'object' || Object.keys(value).length > 0;
}

/**
 * Log format 9: an empty page that says it failed (`{ "items": [], "success": false }`): not the
 * end of the records but an error answered 2xx, which ended the walk "completed".
 */
export function refuseFailedEmptyPage(body: unknown, items: unknown[], index: number, describe: () => string | undefined, forms = false): void {
  if (items.length > 0 || body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const flag = FAILURE_FLAGS.find((name) => flagAt(body, name, forms) === false);
  if (flag === undefined) return;
  const where = describe();
  throw new PaginationError(
    `page ${index + 1}${where ? ` (${where})` : ''} holds no records and says it failed (${flag}: ${JSON.stringify((body as Record<string, unknown>)[flag])}): ${excerpt(body)}. ` +
      `Not taken for the last page: run the mission again once the API answers`,
  );
}
const FAILURE_FLAGS = ['success', 'ok', 'succeeded'] as const;

/**
 * Log format 9: the page says it is the last (`has_more: false`, `last: true`) — a cursor walk
 * ends there even when the page carries a cursor (Dropbox sends one on every page, so the walk
 * asked for 10,000 pages and failed at the page limit).
 */
export function saysLast(body: unknown, forms = false): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  return MORE_FLAGS.some((path) => flagAt(body, path, forms) === false) || LAST_FLAGS.some((path) => flagAt(body, path, forms) === true) || END_FLAGS.some((path) => flagAt(body, path, forms) === true);
}

/** Where APIs say in a page's body that more pages follow: a flag, or the next page's link or number. */
const MORE_FLAGS = ['has_more', 'hasMore', 'more', 'has_next', 'hasNext', 'hasNextPage', 'meta.has_more', 'pagination.has_more', 'pageInfo.hasNextPage', 'exceededTransferLimit', '@Microsoft.Dynamics.CRM.morerecords'] as const;
/** A flag that says the page is not the last when `false` (Spring Data's `last`, Jira's `isLast`). */
const LAST_FLAGS = ['last', 'isLast', 'is_last', 'page.last', 'meta.last', 'pagination.last'] as const;
/** A flag that says the page is not the first when `false` (Spring Data's `first`). */
const FIRST_FLAGS = ['first', 'isFirst', 'is_first', 'page.first', 'meta.first', 'pagination.first'] as const;

/**
 * The first page a `page` walk asked for says it is not the first page (`first: false`, Spring
 * Data's Pageable, which counts pages from 0): the walk started one page in, and the records of
 * the API's first page were never asked for — the run completed without them. Fails the fetch
 * with the fix, `firstPage: 0`.
 */
export function refuseNotFirstPage(plan: PaginationPlan, body: unknown, index: number, describe: () => string | undefined, forms = false): void {
  if (plan.strategy !== 'page' || index !== 0 || body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const flag = FIRST_FLAGS.find((path) => flagAt(body, path, forms) === false);
  if (flag === undefined) return;
  const where = describe();
  const first = plan.firstPage ?? 1;
  throw new PaginationError(`the first page asked for (${where ?? `${plan.param}=${first}`}) says it is not the API's first page (${flag}: false): ${firstPageFix(plan)}`);
}

/** What to do about a page walk that started past the API's first page. */
function firstPageFix(plan: PaginationPlan): string {
  const first = plan.firstPage ?? 1;
  return first === 1
    ? `the API counts its pages from 0, so the records of its first page were skipped. Start the walk at page 0: paginate: { type: page, param: "${plan.param}", pageSize: ${plan.pageSize}${plan.sizeParam !== undefined ? `, sizeParam: "${plan.sizeParam}"` : ''}, firstPage: 0 }`
    : `its first page comes before ${plan.param}=${first}; give that page's number as firstPage`;
}
const NEXT_LINKS = ['next', 'next_page', 'nextPage', 'next_page_url', 'links.next', '_links.next', '_links.next.href', 'meta.next', 'paging.next', 'pagination.next', 'pagination.next_page', '@odata.nextLink', 'odata.nextLink', 'd.__next', '__next'] as const;
/** From log format 9: next-page tokens and offsets (Google's `nextPageToken`, `next_offset`), and counts of what is left. */
const NEXT_TOKENS = [
  'nextPageToken', 'next_page_token', 'nextToken', 'next_token', 'next_offset', 'nextOffset', 'next_cursor', 'nextCursor', 'meta.next_cursor', 'pagination.next_cursor',
  'paging.next.after', 'paging.next.link', 'nextRecordsUrl', 'response_metadata.next_cursor',
  'meta.next_token', 'after_cursor', 'pages.next',
] as const;
/**
 * Next pages' tokens that are text only and say more only where no flag says the page is the last
 * (Airtable's `offset`: a number there is the page's own offset, as in most APIs; Square's
 * `cursor`, which others send beside `has_more: false`).
 */
const TEXT_TOKENS = ['offset', 'cursor'] as const;
/** Counts of the records left (a bare `remaining` is as often a rate limit's quota: not read). */
const REMAINING_COUNTS = ['remaining_count', 'remainingCount', 'records_remaining'] as const;
/** From log format 9: flags that say the page is the last when true (Zendesk's `end_of_stream`), whatever next link it carries; that more follow when false. */
const END_FLAGS = ['end_of_stream', 'endOfStream', 'is_last_page', 'isLastPage'] as const;
/** From log format 9: a flag that says more follow when false (Salesforce's `done: false`). */
const DONE_FLAGS = ['done'] as const;
/** From log format 9: record totals beside those of RECORD_TOTALS (Salesforce's `totalSize`). */
const MORE_RECORD_TOTALS = ['totalSize'] as const;

/** What a page's answer says outside its body, and whether the rules of log format 9 apply (events.ts PAGE_END_RULES_FORMAT). */
export interface PageSays {
  /** The next page its Link header names (rel="next"). */
  linkedNext?: string;
  /** The records its `X-Total-Count` header counts (format 9). */
  headerTotal?: number;
  pageEndRules?: boolean;
  /** Log format 10: flags and counts sent as text, or as 1 and 0, read as what they say (signalValue). */
  signalForms?: boolean;
}

/**
 * A page of an offset or page walk with fewer items than the page size the mission gave was taken
 * for the last page — and where the API's own size is smaller (it caps what is asked at 50, or
 * uses its default of 20 or 30 where the mission sends no size, as reference §C.1.5 never sends
 * one), the walk ended after one page of records in a run that completed. Where the page itself
 * says more follow (`has_more: true`, a `next` link or page number, GitHub's `Link: <…>; rel="next"`
 * header: `linkedNext`), the fetch fails saying so.
 */
export function refuseShortPageWithMore(
  plan: PaginationPlan,
  body: unknown,
  items: unknown[],
  index: number,
  describe: () => string | undefined,
  says: PageSays = {},
): void {
  if (plan.strategy === 'cursor') return;
  // A total is read on the walk's first page only: there it and the page come from one answer, where
  // on a later page a record deleted meanwhile can leave a short last page below an earlier total.
  const shown = saysMore(body, says) ?? (index === 0 ? (countedMore(body, items.length, says) ?? cappedSize(plan, body, items.length, says.signalForms === true)) : undefined);
  if (shown === undefined) return;
  const where = describe();
  if (items.length === 0) {
    // No size to suggest: on the first page the records are not where the walk takes them from;
    // later, the API sent an empty page in the middle of its walk.
    throw new PaginationError(
      `page ${index + 1}${where ? ` (${where})` : ''} holds no items, yet says more pages follow (${shown}): stopping instead of ending the walk with the rest missing. ` +
        (index === 0
          ? `The records are not where the fetch looks: say where with itemsPath, or check where the API's pages start (firstPage)`
          : `The pages before it held records: the API answered an empty page in the middle of its walk; run again, or bound the walk with maxPages or until`),
    );
  }
  const sized = plan.sizeParam !== undefined ? `it was sent as ${plan.sizeParam}=${plan.pageSize} and` : 'the mission sends no size, so';
  throw new PaginationError(
    `page ${index + 1}${where ? ` (${where})` : ''} holds ${items.length} items, fewer than the page size ${plan.pageSize}, yet says more pages follow (${shown}): ` +
      `the API pages by a size of its own (${sized} the API answered ${items.length}), and taking this page for the last would end the walk with the rest missing. ` +
      (plan.sizeParam !== undefined
        ? `Set the page size to what the API allows: ${plan.strategy}(${plan.param}, ${items.length}, ${plan.sizeParam})`
        : `Send the size with the name the API reads it by — ${plan.strategy}(${plan.param}, ${plan.pageSize}, per_page) or limit, page_size… — or set the page size to the API's: ${plan.strategy}(${plan.param}, ${items.length})`),
  );
}

/**
 * Where a page says itself that more pages follow — a flag (`has_more: true`, `last: false`), a next
 * page's link or number, a `rel: "next"` in its list of links, its Link header's rel="next"
 * (`linkedNext`) — as shown in messages; undefined when it says nothing of the kind.
 */
export function saysMore(body: unknown, { linkedNext, pageEndRules = false, signalForms: forms = false }: PageSays): string | undefined {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    // A flag that says this is the last page wins over any token beside it (Dropbox's cursor beside `has_more: false`).
    if (pageEndRules && saysLast(body, forms)) return undefined;
    const notDone = pageEndRules ? [...DONE_FLAGS, ...END_FLAGS].find((path) => flagAt(body, path, forms) === false) : undefined;
    const flag = MORE_FLAGS.find((path) => flagAt(body, path, forms) === true) ?? LAST_FLAGS.find((path) => flagAt(body, path, forms) === false) ?? notDone;
    if (flag !== undefined) return `${flag}: ${JSON.stringify(getPath(body, flag))}`;
    const links: readonly string[] = pageEndRules ? [...NEXT_LINKS, ...NEXT_TOKENS] : NEXT_LINKS;
    // A token of 0 or "0" names no next page (Twitter's `next_cursor: 0` is its end).
    const link =
      links.find((path) => isNextPage(getPath(body, path)) && !(pageEndRules && isZeroToken(getPath(body, path)))) ??
      (pageEndRules ? TEXT_TOKENS.find((path) => typeof getPath(body, path) === 'string' && getPath(body, path) !== '') : undefined);
    if (link !== undefined) return `${link}: ${JSON.stringify(getPath(body, link)).slice(0, 120)}`;
    const left = pageEndRules ? REMAINING_COUNTS.find((path) => (countAt(body, path, forms) ?? 0) > 0) : undefined;
    if (left !== undefined) return `${left}: ${JSON.stringify(getPath(body, left))}`;
    const listed = nextInLinkList(body as Record<string, unknown>);
    if (listed !== undefined) return `a link with rel "next": ${JSON.stringify(listed).slice(0, 120)}`;
  }
  return linkedNext !== undefined ? `its Link header: <${linkedNext.slice(0, 120)}>; rel="next"` : undefined;
}

/**
 * The first page echoes the size parameter the mission sent, lowered (Jira's `maxResults: 100`
 * where 1000 was asked, Confluence's `limit`), and is full by that size: the API capped the size,
 * so more may well follow — unless a count of records (a bare `total` too) says the page holds
 * them all: an API may echo as `limit` what it returned. (Read on the first page only: a later
 * short page is the end of a walk whose first page was full by the mission's size.) As shown in messages.
 */
function cappedSize(plan: PaginationPlan, body: unknown, held: number, forms = false): string | undefined {
  const echoed = echoedSize(plan, body, forms);
  if (echoed === undefined || held < echoed) return undefined;
  const counted = [...RECORD_TOTALS, ...LOOSE_TOTALS].map((path) => countAt(body, path, forms)).find((n) => n !== undefined);
  return counted !== undefined && counted <= held ? undefined : `${plan.sizeParam}: ${echoed}, the size it pages by`;
}

/** The size the page says it was cut to, under the name the mission sent it by, when below what was sent. */
function echoedSize(plan: PaginationPlan, body: unknown, forms = false): number | undefined {
  if (plan.sizeParam === undefined || plan.pageSize === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const echoed = [plan.sizeParam, `meta.${plan.sizeParam}`, `pagination.${plan.sizeParam}`].map((path) => countAt(body, path, forms)).find((n) => n !== undefined);
  return echoed !== undefined && echoed > 0 && echoed < plan.pageSize ? echoed : undefined;
}

/**
 * The last page of a `page` walk, whose answer counts the API's pages (`totalPages: 3`, Spring
 * Data's PagedModel under `page.`), ends one page short of that count: asked from page 1 of an
 * API that counts from 0, the walk skipped the API's first page — its answers carry no `first`
 * flag to say so (refuseNotFirstPage). A walk that started at the API's first page ends on the
 * page numbered firstPage + totalPages − 1 when that page is short, one later when it is empty.
 */
export function refuseSkippedFirstPage(plan: PaginationPlan, body: unknown, held: number, index: number, describe: () => string | undefined, says: PageSays = {}): void {
  if (plan.strategy !== 'page' || body === null || typeof body !== 'object' || Array.isArray(body)) return;
  // A page that says more follow, or that the API cut to a size of its own, is no last page of a
  // count from 0 but a page of an API paging by a smaller size: refuseShortPageWithMore says so.
  if (saysMore(body, says) !== undefined || (held > 0 && echoedSize(plan, body, says.signalForms === true) !== undefined)) return;
  const forms = says.signalForms === true;
  const field = PAGE_TOTALS.find((path) => countAt(body, path, forms) !== undefined);
  if (field === undefined) return;
  const totalPages = countAt(body, field, forms)!;
  const first = plan.firstPage ?? 1;
  const asked = first + index;
  const expected = first + totalPages - (held === 0 ? 0 : 1);
  if (totalPages === 0 || asked !== expected - 1) return;
  // An empty first page of a one-page count is an empty API as often (will_paginate says
  // total_pages: 1 with no records) as a skipped page 0: only a count of records tells.
  if (index === 0 && held === 0 && ![...RECORD_TOTALS, ...LOOSE_TOTALS].some((path) => (countAt(body, path, forms) ?? 0) > 0)) return;
  // A page as long as the API's own page size would be (its count of records spread over its
  // count of pages) is a 1-based API paging by a smaller size than asked: refuseShortPageWithMore says so.
  // A bare `total` counts here only above what the page holds (a page's own `count` would excuse every page).
  const records = [...RECORD_TOTALS, ...LOOSE_TOTALS].find((path) => countAt(body, path, forms) !== undefined && (RECORD_TOTALS.includes(path as never) || countAt(body, path, forms)! > held));
  if (records !== undefined && held > 0 && held * totalPages >= countAt(body, records, forms)!) return;
  const where = describe();
  throw new PaginationError(
    `the walk ended on page ${index + 1} (${where ?? `${plan.param}=${asked}`}), but the API counts ${totalPages} pages (${field}: ${totalPages}) and the walk asked for pages ${first} to ${asked}: ${firstPageFix(plan)}`,
  );
}

/**
 * Totals that say how many records (or pages) the whole walk holds. Only names that mean nothing
 * else: a bare `total` or `count` is as often a sum of money or the page's own count.
 */
const RECORD_TOTALS = ['nbHits', 'numFound', 'response.numFound', 'hits.total', 'hits.total.value', 'found', 'estimatedTotalHits', 'totalHits', 'numberMatched', '@odata.count', 'meta.pagination.total', 'total_count', 'totalCount', 'total_results', 'totalResults', 'total_items', 'totalItems', 'total_entries', 'totalEntries', 'totalElements', 'page.totalElements', 'meta.total', 'meta.total_count', 'meta.totalCount', 'pagination.total', 'pagination.total_count', 'pagination.totalCount'] as const;
/**
 * Counts that say as often something else (a sum, the page's own count): read only where a
 * page holds no records at all, where any count above 0 says records are somewhere.
 */
const LOOSE_TOTALS = ['total', 'count', 'meta.count', 'pagination.count'] as const;
const PAGE_TOTALS = ['nbPages', 'meta.pagination.pageCount', 'meta.pagination.total_pages', 'meta.pagination.totalPages', 'total_pages', 'totalPages', 'page_count', 'pageCount', 'page.totalPages', 'meta.total_pages', 'meta.totalPages', 'pagination.total_pages', 'pagination.totalPages'] as const;

/** The total that says a first page of `held` records is not all there is (`total_count: 95`, `total_pages: 5`), as shown in messages. */
export function countedMore(body: unknown, held: number, { headerTotal, pageEndRules = false, signalForms = false }: PageSays = {}): string | undefined {
  const totals: readonly string[] = pageEndRules ? [...RECORD_TOTALS, ...MORE_RECORD_TOTALS] : RECORD_TOTALS;
  const records = totals.find((path) => (countAt(body, path, signalForms) ?? -1) > held);
  if (records !== undefined) return `${records}: ${JSON.stringify(getPath(body, records))}`;
  if (headerTotal !== undefined && headerTotal > held) return `its X-Total-Count header: ${headerTotal}`;
  const pages = PAGE_TOTALS.find((path) => (countAt(body, path, signalForms) ?? 0) > 1);
  return pages !== undefined ? `${pages}: ${JSON.stringify(getPath(body, pages))}` : undefined;
}

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** A next page's link or number: a non-empty string, or a number. `false`, null and "" say there is none. */
function isZeroToken(value: unknown): boolean {
  return value === 0 || value === '0';
}

function isNextPage(value: unknown): boolean {
  return (typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value));
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

/** See the header: an offset walk whose page is longer than the size it steps by takes records twice. */
export function refuseOverlongOffsetPage(plan: PaginationPlan, items: unknown[], index: number, describe: () => string | undefined): void {
  const size = plan.pageSize;
  if (plan.strategy !== 'offset' || size === undefined || items.length <= size) return;
  const where = describe();
  const sized = plan.sizeParam !== undefined ? `it was sent as ${plan.sizeParam}=${size}` : 'the mission sends no size';
  throw new PaginationError(
    `page ${index + 1}${where ? ` (${where})` : ''} holds ${items.length} items, more than the page size ${size} the offset steps by (${sized}): ` +
      `the API pages by a size of its own, so the next page (offset + ${size}) would hold ${items.length - size} of these records again, taken twice. ` +
      (plan.sizeParam !== undefined
        ? `Set the page size to what the API sends: offset(${plan.param}, ${items.length}, ${plan.sizeParam})`
        : `Send the size with the name the API reads it by — offset(${plan.param}, ${size}, limit) or per_page, page_size… — or set the page size to the API's: offset(${plan.param}, ${items.length})`),
  );
}
