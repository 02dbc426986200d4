/**
 * The Events tab's search (engine/inspect/event-search.ts, engine/server/event-search-query.ts):
 * step prefixes stop at path boundaries, `*` spans one segment, text is found in payloads
 * case-insensitively, filters combine, and a search fed a growing log in pieces finds exactly
 * what a fresh search of the whole log finds — the same pages, the same located seq.
 */
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { EventSearch, stepMatcher, type EventFilter } from '../../engine/inspect/event-search.js';
import { eventSearchQuery, searchEvents } from '../../engine/server/event-search-query.js';
import { StudioError } from '../../engine/server/studio-error.js';
import { EventBuilder } from './event-builder.js';

/** A loop over `n` orders: each iteration posts the order (a 422 for every 7th) and stores it. */
function loopRun(n: number): StoredEvent[] {
  const log = new EventBuilder();
  log.add('run.started', '', { mission: 'Orders', missionHash: 'h1' });
  log.add('action.started', 'Sync', { action: 'Sync', attempt: 1 });
  for (let i = 0; i < n; i++) {
    const path = `Sync/1[${i}]/0`;
    log.add('step.started', path, { stepType: 'post', line: 9 });
    log.add('http.request', path, { effectId: `e${i}`, attempt: 1, request: { method: 'POST', url: `http://api/confirmations/${i}`, headers: {} } });
    const status = i % 7 === 3 ? 422 : 201;
    log.add('http.response', path, { effectId: `e${i}`, attempt: 1, response: { status, headers: {}, body: { id: `Order-${i}`, note: status === 422 ? 'Amount Invalid' : 'ok' } }, durationMs: 2, verdict: status === 201 ? 'success' : 'fail' });
    log.add('step.completed', path, { stepType: 'post' });
  }
  log.add('step.started', 'Sync/10', { stepType: 'get', line: 20 });
  log.add('step.completed', 'Sync/10', { stepType: 'get' });
  return log.events;
}

function fresh(events: readonly StoredEvent[], filter: EventFilter) {
  const search = new EventSearch(filter);
  search.advance(events);
  return search.page(events, 0, 1_000_000);
}

describe('event search', () => {
  it('matches a step path as a prefix at path boundaries, with * for one segment', () => {
    const m = stepMatcher('Sync/1');
    expect(['Sync/1', 'Sync/1[4]/2', 'Sync/1>0/1', 'Sync/1!/0', 'Sync/1#2'].every(m)).toBe(true);
    expect(['Sync/10', 'Sync/12[0]/1', 'Sync', 'Other/1', ''].some(m)).toBe(false);
    const each = stepMatcher('Sync/1[*]/0');
    expect(each('Sync/1[0]/0') && each('Sync/1[123]/0') && each('Sync/1[5]/0[2]/1')).toBe(true);
    expect(each('Sync/1[5]/1') || each('Sync/1[5]/01') || each('Sync/2[5]/0')).toBe(false);
    // Regex characters in a step path are literal: `[` opens no class, `.` is a dot.
    expect(stepMatcher('a.b')('aXb')).toBe(false);
    expect(stepMatcher('Sync/1[2]')('Sync/1[2]/0')).toBe(true);
    expect(stepMatcher('Sync/1[2]')('Sync/1[3]/0')).toBe(false);
  });

  it('filters by type, step and payload text, all at once, case-insensitively', () => {
    const events = loopRun(50);
    const failures = fresh(events, { types: ['http.response'], text: 'amount invalid' });
    const expected = events.filter((e) => e.type === 'http.response' && (e.payload as { response: { status: number } }).response.status === 422);
    expect(expected.length).toBe(7);
    expect(failures.events.map((e) => e.seq)).toEqual(expected.map((e) => e.seq));
    expect(failures.total).toBe(7);

    const oneIteration = fresh(events, { step: 'Sync/1[17]' });
    expect(oneIteration.events.map((e) => e.type)).toEqual(['step.started', 'http.request', 'http.response', 'step.completed']);
    expect(fresh(events, { step: 'Sync/1[17]', text: 'ORDER-17' }).events.map((e) => e.type)).toEqual(['http.response']);
    // The text is looked for in the step path and the type too.
    expect(fresh(events, { text: 'sync/10' }).total).toBe(2);
    expect(fresh(events, { text: 'STEP.COMPLETED' }).total).toBe(51);
    expect(fresh(events, { text: 'no such text' }).total).toBe(0);
    // Regex characters in the text are literal.
    expect(fresh(events, { text: '[17]' }).total).toBe(4);
    expect(fresh(events, { text: 'order-.7' }).total).toBe(0);
    // No filter: every event, in seq order.
    expect(fresh(events, {}).events.map((e) => e.seq)).toEqual(events.map((e) => e.seq));
    // Types are counted over the whole log whatever the filter, most frequent first.
    const types = fresh(events, { text: 'no such text' }).types;
    expect(types.slice(0, 2)).toEqual([{ type: 'step.completed', count: 51 }, { type: 'step.started', count: 51 }]);
    expect(types.find((t) => t.type === 'http.request')).toEqual({ type: 'http.request', count: 50 });
    expect(types.reduce((n, t) => n + t.count, 0)).toBe(events.length);
  });

  it('pages and locates the same way whether the log arrived whole or in pieces', () => {
    const events = loopRun(300);
    const filters: EventFilter[] = [{}, { types: ['http.request', 'step.completed'] }, { step: 'Sync/1[*]/0', text: '422' }, { text: 'order-2' }];
    for (const filter of filters) {
      const whole = fresh(events, filter);
      const growing = new EventSearch(filter);
      // A live run: the log grows in uneven pieces, and the search is asked after each.
      for (let end = 0; end < events.length; end += 1 + ((end * 7919) % 97)) growing.advance(events.slice(0, end));
      growing.advance(events);
      const paged: number[] = [];
      for (let from = 0; from < whole.total; from += 37) paged.push(...growing.page(events, from, 37).events.map((e) => e.seq));
      expect(paged, JSON.stringify(filter)).toEqual(whole.events.map((e) => e.seq));
      expect(growing.page(events, 0, 1).total).toBe(whole.total);
      // Locating a seq gives the first match at or after it.
      for (const seq of [1, 500, 777, events.length, events.length + 5]) {
        const located = growing.page(events, 0, 1, seq).located;
        const expected = whole.events.findIndex((e) => e.seq >= seq);
        expect(located).toBe(expected < 0 ? null : expected);
      }
    }
  });

  it('keeps a search per run view and filter, extended as the view grows', () => {
    const events = loopRun(40);
    const owner = {};
    const query = eventSearchQuery('run.eventSearch', { filter: { types: ['http.response'] }, limit: 10 });
    const first = searchEvents(owner, events.slice(0, 30), query);
    expect(first.lastSeq).toBe(30);
    const later = searchEvents(owner, events, { ...query, fromIndex: 35 });
    expect(later.total).toBe(40);
    expect(later.lastSeq).toBe(events.length);
    expect(later.events.map((e) => e.seq)).toEqual(fresh(events, { types: ['http.response'] }).events.slice(35).map((e) => e.seq));
  });

  it('refuses malformed requests with a bad-request naming the field', () => {
    const bad = (req: Record<string, unknown>) => {
      try {
        eventSearchQuery('run.eventSearch', req);
      } catch (e) {
        expect(e).toBeInstanceOf(StudioError);
        return `${(e as StudioError).code}: ${(e as Error).message}`;
      }
      throw new Error(`accepted ${JSON.stringify(req)}`);
    };
    expect(bad({ filter: { types: 'http.request' } })).toMatch(/^bad-request: .*"filter\.types"/);
    expect(bad({ filter: { types: [1] } })).toMatch(/"filter\.types"/);
    expect(bad({ filter: { text: 'x'.repeat(1001) } })).toMatch(/"filter\.text"/);
    expect(bad({ filter: { step: 7 } })).toMatch(/"filter\.step"/);
    expect(bad({ filter: [] })).toMatch(/must be a JSON object/);
    expect(bad({ filter: {}, fromIndex: -1 })).toMatch(/"fromIndex"/);
    expect(bad({ filter: {}, limit: 1e308 })).toMatch(/"limit"/);
    expect(bad({ filter: {}, locateSeq: 0 })).toMatch(/"locateSeq"/);
    expect(eventSearchQuery('run.eventSearch', { filter: {}, limit: 1e6 }).limit).toBe(2000);
    expect(eventSearchQuery('run.eventSearch', {}).filter).toEqual({});
  });
});

describe('a search page of a run with large answers', () => {
  it('leaves the large values of a large payload out (marked elided), keeps the small fields its row reads, and leaves small events as they are', () => {
    // Helper 78/81: ten answers of 60 MB in one page of the Events tab were past what one JSON text holds.
    const log = new EventBuilder();
    log.add('run.started', '', { mission: 'Big', missionHash: 'h1' });
    const big = { items: Array.from({ length: 5_000 }, (_, i) => ({ id: i, text: 'x'.repeat(100) })) };
    log.add('http.response', 'Sync/0', { effectId: 'e1', attempt: 1, response: { status: 200, headers: { 'content-type': 'application/json' }, body: big }, durationMs: 2, verdict: 'success' });
    log.add('http.response', 'Sync/1', { effectId: 'e2', attempt: 1, response: { status: 200, headers: {}, body: 'y'.repeat(400_000) }, durationMs: 2, verdict: 'success' });
    log.add('http.response', 'Sync/2', { effectId: 'e3', attempt: 1, response: { status: 204, headers: {}, body: null }, durationMs: 1, verdict: 'success' });
    const search = new EventSearch({});
    search.advance(log.events);
    const [started, json, text, small] = search.page(log.events, 0, 10).events as ({ elided?: true; payload: { response?: { status: number; body: unknown } } } & StoredEvent)[];
    expect(started!.elided).toBeUndefined();
    expect(json!.elided).toBe(true);
    expect(json!.payload.response!.status).toBe(200);
    expect(json!.payload.response!.body).toEqual({ items: expect.stringMatching(/^\(a list of 5000, .* MB, left out of the list: the event preview shows it whole\)$/) as string });
    expect(text!.elided).toBe(true);
    expect(text!.payload.response!.body).toMatch(/MB of text, left out of the list/);
    expect(small).toBe(log.events[3]);
    expect(JSON.stringify(search.page(log.events, 0, 10)).length).toBeLessThan(50_000);
    // The log's events themselves are untouched.
    expect((log.events[1]!.payload as { response: { body: unknown } }).response.body).toBe(big);
  });
});

describe('text search in payloads', () => {
  it('finds text holding a quote or a backslash, as the payload has it (not as its JSON escapes it)', () => {
    const log = new EventBuilder();
    log.add('run.started', '', { mission: 'Quotes', missionHash: 'h1' });
    log.add('step.failed', 'A/0', { stepType: 'Validate', error: { code: 'validation', message: '"email" is required, she said "hi" in C:\\temp' } });
    for (const text of ['"email" is required', 'she said "hi"', 'C:\\temp']) {
      const search = new EventSearch({ text });
      search.advance(log.events);
      expect(search.page(log.events, 0, 10).total, text).toBe(1);
    }
  });
});
