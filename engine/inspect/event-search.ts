/**
 * Searching a run's events for the studio's Events tab: by type, by step and by text, on the
 * engine side, so a 100k-event run is filtered where its events already are and the renderer
 * pages through the matches as it pages through the whole log.
 *
 * A search holds the positions in the log of the events that matched, in order, and how far into the log it has looked, so a
 * live run's new events are matched once each (`advance` looks only past `scanned`) and paging
 * costs a slice, not a scan. It also counts every event's type on the way, for the type picker.
 *
 * Step filter: a step path, matched as a prefix at a path boundary — `Sync/1` keeps `Sync/1`,
 * `Sync/1[4]/2` and `Sync/1>0/1`, never `Sync/10` — where `*` stands for any text within one
 * segment, so `Sync/1[*]/3` keeps the 4th step of every iteration. Text: case-insensitive, in the
 * type, the step path or the payload's JSON (payloads are redacted before they are logged, so a
 * search can never find a secret).
 */
import type { StoredEvent } from '../log/events.js';

export interface EventFilter {
  /** Keep events of any of these types; empty or absent keeps every type. */
  types?: string[];
  /** A step path prefix, `*` for any text within a segment; empty keeps every step. */
  step?: string;
  /** Case-insensitive text in the type, the step path or the payload's JSON. */
  text?: string;
}

/** An event as a page of the list holds it: `elided` when large values of its payload were left out (listedEvent). */
export type ListedEvent = StoredEvent & { elided?: true };

/** One page of a search: matches `fromIndex`… of `total`, over the log up to `lastSeq`. */
export interface EventSearchPage {
  total: number;
  lastSeq: number;
  fromIndex: number;
  events: ListedEvent[];
  /** When asked with `locateSeq`: the index of the first match at or after that seq; null when none. */
  located: number | null;
  /** Every type in the log up to `lastSeq` with how many events have it, most frequent first. */
  types: { type: string; count: number }[];
}

/**
 * Each event's payload as JSON text, made once: the first text search of a run pays for
 * stringifying its payloads, the next ones only read. Held as long as the event is (the run's view).
 */
const payloadTexts = new WeakMap<StoredEvent, string>();
function payloadText(event: StoredEvent): string {
  let text = payloadTexts.get(event);
  if (text === undefined) payloadTexts.set(event, (text = JSON.stringify(event.payload) ?? ''));
  return text;
}

/** A payload whose JSON is larger than this comes to the list with its large values elided. */
export const LISTED_PAYLOAD_BYTES = 256 * 1024;
/** Of such a payload, a value (to three levels down) whose JSON is larger than this is elided. */
const ELIDED_VALUE_BYTES = 16 * 1024;

/**
 * `event` as a page of the Events list holds it. A page is one JSON text, and ten answers of 60 MB
 * in one were past what a string holds (helper 78): a payload past LISTED_PAYLOAD_BYTES comes with
 * its large values — an answer's body, a stored record — replaced by a note of their size, and the
 * event marked `elided`; its row reads only the small fields, and the preview asks for it whole
 * (`run.events`).
 */
export function listedEvent(event: StoredEvent): ListedEvent {
  if (payloadText(event).length <= LISTED_PAYLOAD_BYTES) return event;
  return { ...event, payload: elideLarge(event.payload, 0) as StoredEvent['payload'], elided: true } as ListedEvent;
}

function elideLarge(value: unknown, depth: number): unknown {
  if (typeof value === 'string' && value.length > ELIDED_VALUE_BYTES) return `(${(value.length / 1048576).toFixed(1)} MB of text, left out of the list: the event preview shows it whole)`;
  if (value === null || typeof value !== 'object') return value;
  const size = JSON.stringify(value)?.length ?? 0;
  if (size <= ELIDED_VALUE_BYTES) return value;
  if (Array.isArray(value)) return `(a list of ${value.length}, ${(size / 1048576).toFixed(1)} MB, left out of the list: the event preview shows it whole)`;
  if (depth >= 3) return `(${(size / 1048576).toFixed(1)} MB, left out of the list: the event preview shows it whole)`;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, elideLarge(v, depth + 1)]));
}

/** The characters that may follow a step's own path in the paths of what runs inside it (journal/step-path.ts). */
const BOUNDARY = '(?:$|[/\\[>!#~])';

export function stepMatcher(step: string): (stepPath: string) => boolean {
  const pattern = step
    .split('*')
    .map(escapeRegExp)
    .join('[^/]*');
  const re = new RegExp(`^${pattern}${BOUNDARY}`);
  return (stepPath) => re.test(stepPath);
}

/** A stable key for a filter: the same filter typed twice shares one search. */
export function filterKey(filter: EventFilter): string {
  return JSON.stringify([[...(filter.types ?? [])].sort(), filter.step ?? '', (filter.text ?? '').toLowerCase()]);
}

export function isEmptyFilter(filter: EventFilter): boolean {
  return (filter.types?.length ?? 0) === 0 && !filter.step && !filter.text;
}

export class EventSearch {
  /** Indexes into the log (the run's events in seq order) of the events that matched. */
  private readonly matches: number[] = [];
  private readonly typeCounts = new Map<string, number>();
  private readonly test: (event: StoredEvent) => boolean;
  /** Events looked at so far: the log's first `scanned` events (they are in seq order). */
  private scanned = 0;
  private lastSeq = 0;

  constructor(readonly filter: EventFilter) {
    const types = new Set(filter.types ?? []);
    const step = filter.step ? stepMatcher(filter.step) : null;
    // Case-insensitive without lower-casing copies of megabyte payloads.
    const text = filter.text ? new RegExp(escapeRegExp(filter.text), 'i') : null;
    // In the payload's JSON, text as JSON writes it: `she said "hi"` is `she said \"hi\"` there,
    // `C:\temp` is `C:\\temp` (helper 83: such searches found nothing).
    const inJson = filter.text ? JSON.stringify(filter.text).slice(1, -1) : '';
    const jsonText = filter.text && inJson !== filter.text ? new RegExp(escapeRegExp(inJson), 'i') : text;
    this.test = (event) => {
      if (types.size > 0 && !types.has(event.type)) return false;
      if (step && !step(event.stepPath)) return false;
      if (text === null) return true;
      // Cheap fields first: most searches are for a type or a step, and a payload may be megabytes.
      return text.test(event.type) || text.test(event.stepPath) || jsonText!.test(payloadText(event));
    };
  }

  /** Matches the events of `log` past the ones already looked at; `log` is the run's events in seq order. */
  advance(log: readonly StoredEvent[]): void {
    for (; this.scanned < log.length; this.scanned++) {
      const event = log[this.scanned]!;
      this.typeCounts.set(event.type, (this.typeCounts.get(event.type) ?? 0) + 1);
      if (this.test(event)) this.matches.push(this.scanned);
      this.lastSeq = event.seq;
    }
  }

  /** Matches [fromIndex, fromIndex + limit) of `log`, the same events `advance` was given (or more). */
  page(log: readonly StoredEvent[], fromIndex: number, limit: number, locateSeq?: number): EventSearchPage {
    const events = this.matches.slice(fromIndex, fromIndex + limit).map((i) => listedEvent(log[i]!));
    return {
      total: this.matches.length,
      lastSeq: this.lastSeq,
      fromIndex,
      events,
      located: locateSeq === undefined ? null : this.indexAtOrAfter(locateSeq, log),
      types: [...this.typeCounts].map(([type, count]) => ({ type, count })).sort((a, b) => b.count - a.count || a.type.localeCompare(b.type)),
    };
  }

  private indexAtOrAfter(seq: number, log: readonly StoredEvent[]): number | null {
    let lo = 0;
    let hi = this.matches.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (log[this.matches[mid]!]!.seq < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.matches.length ? lo : null;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
