/**
 * Journal.skipFinishedPages consumes the leading pages of a streamed sync without the walk only
 * where the log vouches for each: its attempts answered, a whole batch of writes, and the next
 * page asked for after it — and never where the walk is not simply following the log.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../engine/env/fake-env.js';
import { Journal, type JournalOptions, type StreamedRecord } from '../../engine/journal/journal.js';
import type { ReplayReader } from '../../engine/log/log.js';
import type { EventType, StoredEvent } from '../../engine/log/events.js';
import { loopConstruct } from '../../engine/journal/step-path.js';

/** `status`: an `http.response`'s (default 200). */
type Entry = [type: EventType, stepPath: string, status?: number];
const FETCH = 'S/0';
const STORE = 'S/1';

/** One attempt answered (`http.response`), else failed in flight (`http.error`). */
const answered: Entry[] = [['http.request', FETCH], ['http.response', FETCH]];
const answeredWith = (status: number): Entry[] => [['http.request', FETCH], ['http.response', FETCH, status]];
const erred: Entry[] = [['http.request', FETCH], ['http.error', FETCH]];
const writes = (n: number): Entry[] => Array.from({ length: n }, (): Entry => ['store.write', STORE]);
const page = (n: number, attempts: Entry[] = answered): Entry[] => [...attempts, ...writes(n)];

/** The streamed pair's events: both steps started, then `pages`, then `after`. */
function syncLog(pages: Entry[][], after: Entry[] = [['step.completed', FETCH], ['step.completed', STORE]]): StoredEvent[] {
  const entries: Entry[] = [['step.started', FETCH], ['step.started', STORE], ...pages.flat(), ...after];
  // Payloads that throw when read: a skipped page must never look at them.
  return entries.map(([type, stepPath, status], i) => {
    const event = { runId: 'r', seq: i + 1, type, stepPath, recordedAt: i };
    const payload = () => (type === 'http.response' ? { effectId: `e${i}`, response: { status: status ?? 200 } } : { effectId: `e${i}` });
    Object.defineProperty(event, 'payload', { get: () => (type === 'store.write' ? unread(i + 1) : payload()), enumerable: true });
    return event as unknown as StoredEvent;
  });
}

function unread(seq: number): never {
  throw new Error(`the payload of store.write ${seq} was read`);
}

/**
 * A streamed record over `events` (EventLog.replayReader), `chunk` events a read, measuring runs
 * of writes in place as SQLite's does; `yielded` lists the seqs `next` handed out.
 */
function measuringReader(events: StoredEvent[], chunk: number): ReplayReader & { yielded: number[] } {
  let at = 0;
  const yielded: number[] = [];
  return {
    total: events.length,
    yielded,
    next(max) {
      const out = events.slice(at, at + Math.min(max, chunk));
      at += out.length;
      yielded.push(...out.map((e) => e.seq));
      return out;
    },
    measureRun(type, stepPath) {
      const start = at;
      let end = start;
      while (end < events.length && events[end]!.type === type && events[end]!.stepPath === stepPath) end++;
      const after = events[end];
      return {
        length: end - start,
        after: after && { type: after.type, stepPath: after.stepPath },
        passOver: () => {
          if (at !== start) throw new Error('read between measureRun and passOver');
          at = end;
        },
      };
    },
  };
}

/** How the journals under test get their record: whole, or streamed with runs measured in place. */
const RECORDS = {
  whole: (events: StoredEvent[]) => events,
  'streamed, 3 a read': (events: StoredEvent[]) => ({ reader: measuringReader(events, 3), lastSeq: events.length }),
  'streamed, 4096 a read': (events: StoredEvent[]) => ({ reader: measuringReader(events, 4096), lastSeq: events.length }),
};
let record: (events: StoredEvent[]) => StoredEvent[] | StreamedRecord = RECORDS.whole;

function journal(events: StoredEvent[], options: JournalOptions = { skipFinished: true }): Journal {
  const j = new Journal(null, null, 'r', record(events), new FakeClock(0), options);
  expect(j.take(FETCH, 'step.started')).toBeDefined();
  expect(j.take(STORE, 'step.started')).toBeDefined();
  return j;
}

describe.each(Object.keys(RECORDS) as (keyof typeof RECORDS)[])('Journal.skipFinishedPages (%s record)', (kind) => {
  beforeEach(() => {
    record = RECORDS[kind];
  });

  it('takes every page followed by the next page’s request, and leaves the last one to the walk', () => {
    // The first page's status is the fetch's (fetch-step.ts): it is said.
    const j = journal(syncLog([page(3, answeredWith(206)), page(3), page(2)]));
    expect(j.skipFinishedPages(FETCH, STORE, 3)).toEqual({ pages: 2, items: 6, firstStatus: 206, lastAnswer: expect.objectContaining({ type: 'http.response' }) });
    // The walk goes on at the third page's request.
    expect(j.take(FETCH, 'http.request')?.seq).toBe(2 + 2 * 5 + 1);
    expect(j.take(FETCH, 'http.response')).toBeDefined();
    for (let i = 0; i < 2; i++) expect(j.take(STORE, 'store.write')).toBeDefined();
  });

  it('asks about pages\' bodies only until one decides the list field: the first page with records, nearly always', () => {
    const asked: number[] = [];
    // undefined: no records (ask the next); false: records but no field (decided, read no further).
    const answers = [undefined, false, true, true];
    const j = journal(syncLog([page(3), page(3), page(3), page(3), page(2)]));
    const finished = j.skipFinishedPages(FETCH, STORE, 3, () => answers[asked.push(0) - 1]);
    expect(finished.pages).toBe(4);
    expect(asked).toHaveLength(2);
    expect(finished.listAnswer).toBeUndefined();
    // A page naming its field is the one handed over, and the last asked about.
    const seen: number[] = [];
    const k = journal(syncLog([page(3), page(3), page(3), page(2)]));
    const named = k.skipFinishedPages(FETCH, STORE, 3, () => (seen.push(0) === 2 ? true : undefined));
    expect(seen).toHaveLength(2);
    expect(named.listAnswer).toEqual(expect.objectContaining({ type: 'http.response', seq: 2 + 5 + 2 }));
  });

  it('walks a page answered after retries: its failed attempts must reach the circuit breaker', () => {
    const retried: Entry[] = [...erred, ...answeredWith(503), ...answered];
    expect(journal(syncLog([page(2, retried), page(2), page(1)])).skipFinishedPages(FETCH, STORE, 2)).toEqual({ pages: 0, items: 0 });
    // Pages before it are taken; it and the rest are walked.
    const j = journal(syncLog([page(2), page(2, retried), page(1)]));
    expect(j.skipFinishedPages(FETCH, STORE, 2)).toEqual({ pages: 1, items: 2, firstStatus: 200, lastAnswer: expect.objectContaining({ type: 'http.response' }) });
  });

  it('stops at a page the log cannot vouch for', () => {
    // Fewer writes than a full page: the pagination would have stopped there, the walk must see it.
    expect(journal(syncLog([page(2), page(2)])).skipFinishedPages(FETCH, STORE, 3)).toEqual({ pages: 0, items: 0 });
    // The last attempt failed in flight (no answer), then the next request: walked.
    expect(journal(syncLog([[...erred, ...writes(2)], page(2)])).skipFinishedPages(FETCH, STORE, 2)).toEqual({ pages: 0, items: 0 });
    // A request with no outcome before the next one (a crash in flight): walked.
    expect(journal(syncLog([[['http.request', FETCH], ...page(2)], page(2)])).skipFinishedPages(FETCH, STORE, 2)).toEqual({ pages: 0, items: 0 });
    // A page recorded something besides its writes (a backfill `page.completed`): walked from there.
    const withRecord: Entry[] = [...answered, ['page.completed', FETCH], ...writes(2)];
    expect(journal(syncLog([page(2), withRecord, page(2)])).skipFinishedPages(FETCH, STORE, 2)).toEqual({ pages: 1, items: 2, firstStatus: 200, lastAnswer: expect.objectContaining({ type: 'http.response' }) });
    // The log ends after a page's writes (killed there): that page is walked.
    expect(journal(syncLog([page(2), page(2)], [])).skipFinishedPages(FETCH, STORE, 2)).toEqual({ pages: 1, items: 2, firstStatus: 200, lastAnswer: expect.objectContaining({ type: 'http.response' }) });
    // A failure recorded after a page: the failed page is walked, and fails again.
    const failed = syncLog([page(2), page(2), answered], [['step.failed', FETCH], ['step.failed', STORE]]);
    expect(journal(failed).skipFinishedPages(FETCH, STORE, 2)).toEqual({ pages: 2, items: 4, firstStatus: 200, lastAnswer: expect.objectContaining({ type: 'http.response' }) });
    // Writes at another path are another step's.
    const elsewhere: Entry[] = [...answered, ['store.write', 'S/2'], ['store.write', 'S/2']];
    expect(journal(syncLog([elsewhere, page(2)])).skipFinishedPages(FETCH, STORE, 2)).toEqual({ pages: 0, items: 0 });
  });

  it('takes a page of zero items as unfinished even when asked for none (the pagination ended there)', () => {
    expect(journal(syncLog([page(0), page(2)])).skipFinishedPages(FETCH, STORE, 0)).toEqual({ pages: 0, items: 0 });
  });

  it('skips nothing unless the walk simply follows the log of the mission that recorded it', () => {
    const log = () => syncLog([page(2), page(2), page(1)]);
    const none = { pages: 0, items: 0 };
    expect(journal(log(), {}).skipFinishedPages(FETCH, STORE, 2)).toEqual(none);
    expect(journal(log(), { skipFinished: true, verifyOnly: true }).skipFinishedPages(FETCH, STORE, 2)).toEqual(none);
    expect(journal(log(), { skipFinished: true, recordAsked: true }).skipFinishedPages(FETCH, STORE, 2)).toEqual(none);
    const concurrent = journal(log());
    const construct = loopConstruct('S/0');
    concurrent.enterConcurrent(construct);
    expect(concurrent.skipFinishedPages(FETCH, STORE, 2)).toEqual(none);
    // An out-of-order ask built the path index: the cursor no longer tells what is next.
    const indexed = journal(log());
    expect(indexed.peek('S/9')).toBeUndefined();
    expect(indexed.skipFinishedPages(FETCH, STORE, 2)).toEqual(none);
    // Not at a page's start.
    const inside = journal(log());
    expect(inside.take(FETCH, 'http.request')).toBeDefined();
    expect(inside.skipFinishedPages(FETCH, STORE, 2)).toEqual(none);
  });

  it('hands over the last finished page\'s answer, where the pagination\'s checks of the next page start', () => {
    const events = syncLog([page(2), page(2), page(1)]);
    const j = journal(events);
    // Pages 1 and 2 are seqs 3–6 and 7–10: page 2's answer is seq 8.
    expect(j.skipFinishedPages(FETCH, STORE, 2).lastAnswer?.seq).toBe(8);
    expect(journal(syncLog([page(2)])).skipFinishedPages(FETCH, STORE, 2).lastAnswer).toBeUndefined();
  });

  it('leaves the journal consistent: the walk of the rest consumes the log exactly', () => {
    const j = journal(syncLog([page(2), page(2), page(1)]));
    expect(j.skipFinishedPages(FETCH, STORE, 2)).toEqual({ pages: 2, items: 4, firstStatus: 200, lastAnswer: expect.objectContaining({ type: 'http.response' }) });
    expect(j.take(FETCH, 'http.request')).toBeDefined();
    expect(j.take(FETCH, 'http.response')).toBeDefined();
    expect(j.take(STORE, 'store.write')).toBeDefined();
    expect(j.take(FETCH, 'step.completed')).toBeDefined();
    expect(j.take(STORE, 'step.completed')).toBeDefined();
    expect(j.replaying).toBe(false);
    j.assertFullyConsumed();
  });
});

describe('Journal.skipFinishedPages over a streamed record that measures runs of writes', () => {
  it('never reads the writes of a page it takes as recorded, and the walk of the rest reads them as usual', () => {
    const events = syncLog([page(50), page(50), page(20)]);
    const reader = measuringReader(events, 3);
    const j = new Journal(null, null, 'r', { reader, lastSeq: events.length }, new FakeClock(0), { skipFinished: true });
    expect(j.take(FETCH, 'step.started')).toBeDefined();
    expect(j.take(STORE, 'step.started')).toBeDefined();
    expect(j.skipFinishedPages(FETCH, STORE, 50)).toEqual({ pages: 2, items: 100, firstStatus: 200, lastAnswer: expect.objectContaining({ type: 'http.response' }) });
    const writeSeqs = (from: number, to: number) => events.filter((e) => e.type === 'store.write' && e.seq >= from && e.seq <= to).map((e) => e.seq);
    // Pages 1 and 2: seqs 3–54 and 55–106. Of their 100 writes, at most the one or two a read of
    // a page's answer brings along were handed out; the rest were counted in the log.
    expect(reader.yielded.filter((s) => writeSeqs(3, 106).includes(s)).length).toBeLessThanOrEqual(4);
    expect(j.take(FETCH, 'http.request')?.seq).toBe(107);
    expect(j.take(FETCH, 'http.response')).toBeDefined();
    for (let i = 0; i < 20; i++) expect(j.take(STORE, 'store.write')?.seq).toBe(109 + i);
    expect(j.take(FETCH, 'step.completed')).toBeDefined();
    expect(j.take(STORE, 'step.completed')).toBeDefined();
    j.assertFullyConsumed();
  });

  it('reads a page the log cannot vouch for as usual, measured or not', () => {
    // The log ends inside the second page's writes (killed there): the first is taken, the second walked.
    const events = syncLog([page(4), page(4).slice(0, 4)], []);
    const reader = measuringReader(events, 2);
    const j = new Journal(null, null, 'r', { reader, lastSeq: events.length }, new FakeClock(0), { skipFinished: true });
    j.take(FETCH, 'step.started');
    j.take(STORE, 'step.started');
    expect(j.skipFinishedPages(FETCH, STORE, 4)).toEqual({ pages: 1, items: 4, firstStatus: 200, lastAnswer: expect.objectContaining({ type: 'http.response' }) });
    expect(j.take(FETCH, 'http.request')).toBeDefined();
    expect(j.take(FETCH, 'http.response')).toBeDefined();
    for (let i = 0; i < 2; i++) expect(j.take(STORE, 'store.write')).toBeDefined();
    expect(j.replaying).toBe(false);
  });
});
