/**
 * `run.eventSearch`: the request's fields checked, and the searches of each run kept so that
 * paging through one filter's matches (and a live run's new events) never scans the log again.
 * The searches live as long as the run's view: a view dropped from memory takes them with it.
 */
import type { StoredEvent } from '../log/events.js';
import { EventSearch, filterKey, type EventFilter, type EventSearchPage } from '../inspect/event-search.js';
import { asFields, optInt, type Fields } from './request-fields.js';
import { StudioError } from './studio-error.js';

/** Filters kept per run: the one typed now and the few before it (backspace, a toggled type). */
const SEARCHES_KEPT = 4;
const PAGE_MAX = 2000;
const FIELD_MAX = 1000;
const TYPES_MAX = 100;

export interface EventSearchQuery {
  filter: EventFilter;
  fromIndex: number;
  limit: number;
  locateSeq?: number;
}

export function eventSearchQuery(channel: string, req: Fields): EventSearchQuery {
  const raw = asFields(`${channel} filter`, req.filter);
  const filter: EventFilter = {};
  if (raw.types !== undefined && raw.types !== null) {
    if (!Array.isArray(raw.types) || raw.types.length > TYPES_MAX || raw.types.some((t) => typeof t !== 'string' || t.length > FIELD_MAX)) {
      throw new StudioError('bad-request', `${channel}: "filter.types" must be an array of at most ${TYPES_MAX} event types (strings)`);
    }
    filter.types = raw.types as string[];
  }
  for (const field of ['step', 'text'] as const) {
    const value = raw[field];
    if (value === undefined || value === null || value === '') continue;
    if (typeof value !== 'string' || value.length > FIELD_MAX) {
      throw new StudioError('bad-request', `${channel}: "filter.${field}" must be a string of at most ${FIELD_MAX} characters`);
    }
    filter[field] = value;
  }
  const locateSeq = optInt(channel, req, 'locateSeq', 1);
  return {
    filter,
    fromIndex: optInt(channel, req, 'fromIndex', 0) ?? 0,
    limit: Math.min(optInt(channel, req, 'limit', 1) ?? 500, PAGE_MAX),
    ...(locateSeq !== undefined ? { locateSeq } : {}),
  };
}

/** The searches of one run's view, most recently used last. */
const searches = new WeakMap<object, Map<string, EventSearch>>();

/** One page of `query`'s matches among `log`, the events of the run view `owner` holds. */
export function searchEvents(owner: object, log: readonly StoredEvent[], query: EventSearchQuery): EventSearchPage {
  let kept = searches.get(owner);
  if (kept === undefined) searches.set(owner, (kept = new Map()));
  const key = filterKey(query.filter);
  const search = kept.get(key) ?? new EventSearch(query.filter);
  kept.delete(key);
  kept.set(key, search);
  if (kept.size > SEARCHES_KEPT) kept.delete(kept.keys().next().value!);
  search.advance(log);
  return search.page(log, query.fromIndex, query.limit, query.locateSeq);
}
