/**
 * The Events tab's rows: the events that match its filter (all of them when there is none),
 * searched on the engine side (`run.eventSearch`) and loaded page by page as the virtualised list
 * scrolls to them, so a 100k-event run never ships its log — or its matches — whole. Row i is
 * match i; page p holds matches [p*size, (p+1)*size). Matches only ever append as a live log
 * grows, so a full page never changes; a short one (the tail) is fetched again once the log is
 * longer than it was when the page was read.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { invoke } from './bridge.js';
import type { EventFilter, EventSearchPage, StoredEvent } from './protocol.js';
import { describeFailure } from './protocol-failure.js';

export const EVENT_PAGE_SIZE = 500;

export interface EventRows {
  /** Matches over the log up to `scannedSeq`; 0 until the first page came back. */
  total: number;
  scannedSeq: number;
  /** The match at row `index`, once its page is loaded. */
  get: (index: number) => StoredEvent | undefined;
  /** The row of `seq` among the loaded pages, or undefined. */
  rowOf: (seq: number) => number | undefined;
  /** Asks for the pages covering rows [from, to]; loaded pages re-render the caller. */
  ensure: (from: number, to: number) => void;
  /** The first match at or after `seq` and its row, its page loaded (null when there is none). */
  locate: (seq: number) => Promise<Located | null>;
  types: EventSearchPage['types'];
  error: string | null;
}

export interface Located {
  row: number;
  event: StoredEvent;
}

interface Page {
  events: StoredEvent[];
  /** The log's last seq when this page was read. */
  atSeq: number;
}

export function useEventSearch(runId: string, filter: EventFilter, lastSeq: number): EventRows {
  const filterJson = JSON.stringify(filter);
  const pages = useRef(new Map<number, Page>());
  const seqRows = useRef(new Map<number, number>());
  const inFlight = useRef(new Set<number>());
  const [, setVersion] = useState(0);
  const [head, setHead] = useState<{ total: number; scannedSeq: number; types: EventSearchPage['types'] }>({ total: 0, scannedSeq: 0, types: [] });
  const [error, setError] = useState<string | null>(null);
  const lastSeqRef = useRef(lastSeq);
  lastSeqRef.current = lastSeq;

  const request = useCallback(
    (fromIndex: number, locateSeq?: number) =>
      invoke('run.eventSearch', { runId, filter: JSON.parse(filterJson) as EventFilter, fromIndex, limit: EVENT_PAGE_SIZE, ...(locateSeq !== undefined ? { locateSeq } : {}) }),
    [runId, filterJson],
  );

  const take = useCallback((map: Map<number, Page>, p: number, res: EventSearchPage) => {
    if (pages.current !== map) return;
    map.set(p, { events: res.events, atSeq: res.lastSeq });
    res.events.forEach((e, i) => seqRows.current.set(e.seq, p * EVENT_PAGE_SIZE + i));
    setHead((h) => (res.lastSeq >= h.scannedSeq ? { total: res.total, scannedSeq: res.lastSeq, types: res.types } : h));
    setVersion((v) => v + 1);
  }, []);

  const ensure = useCallback(
    (from: number, to: number) => {
      const first = Math.floor(Math.max(0, from) / EVENT_PAGE_SIZE);
      const last = Math.floor(Math.max(0, to) / EVENT_PAGE_SIZE);
      const map = pages.current;
      for (let p = first; p <= last; p++) {
        const have = map.get(p);
        const current = have && (have.events.length === EVENT_PAGE_SIZE || have.atSeq >= lastSeqRef.current);
        if (current || inFlight.current.has(p)) continue;
        inFlight.current.add(p);
        request(p * EVENT_PAGE_SIZE).then(
          (res) => {
            inFlight.current.delete(p);
            take(map, p, res);
          },
          (err: unknown) => {
            inFlight.current.delete(p);
            if (pages.current === map) setError(describeFailure(err));
          },
        );
      }
    },
    [request, take],
  );

  // A new filter (or run) starts from nothing: its first page tells how many rows there are.
  useEffect(() => {
    pages.current = new Map();
    seqRows.current = new Map();
    inFlight.current = new Set();
    setError(null);
    setHead({ total: 0, scannedSeq: 0, types: [] });
    ensure(0, 0);
  }, [ensure]);

  // The log grew past what was searched: the tail page says how many matches there are now.
  useEffect(() => {
    if (lastSeq > head.scannedSeq) ensure(head.total, head.total);
  }, [lastSeq, head.scannedSeq, head.total, ensure]);

  const get = useCallback((index: number) => pages.current.get(Math.floor(index / EVENT_PAGE_SIZE))?.events[index % EVENT_PAGE_SIZE], []);
  const rowOf = useCallback((seq: number) => seqRows.current.get(seq), []);

  const locate = useCallback(
    async (seq: number): Promise<Located | null> => {
      const known = seqRows.current.get(seq);
      if (known !== undefined) return { row: known, event: get(known)! };
      const map = pages.current;
      const res = await request(0, seq);
      take(map, 0, res);
      if (res.located === null) return null;
      const p = Math.floor(res.located / EVENT_PAGE_SIZE);
      if (p > 0) take(map, p, await request(p * EVENT_PAGE_SIZE));
      const event = map.get(p)?.events[res.located % EVENT_PAGE_SIZE];
      return event ? { row: res.located, event } : null;
    },
    [request, take, get],
  );

  return { total: head.total, scannedSeq: head.scannedSeq, get, rowOf, ensure, locate, types: head.types, error };
}
