/**
 * Loads a run's events page by page as the virtualised list scrolls to them, so a 100k-event run
 * never ships its whole log to the renderer at once. Seqs are dense (1..lastSeq), so row i is seq
 * i + 1 and page p holds seqs [p*size + 1, (p+1)*size]. A page that came back short (the tail of a
 * live run) is fetched again once more events are known.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { invoke } from './bridge.js';
import type { StoredEvent } from './protocol.js';
import { describeFailure } from './protocol-failure.js';

export const EVENT_PAGE_SIZE = 500;

export interface EventPages {
  get: (seq: number) => StoredEvent | undefined;
  /** Asks for the pages covering [fromSeq, toSeq]; loaded pages re-render the caller. */
  ensure: (fromSeq: number, toSeq: number) => void;
  error: string | null;
}

export function useEventPages(runId: string | null, lastSeq: number): EventPages {
  const pages = useRef(new Map<number, StoredEvent[]>());
  const inFlight = useRef(new Set<number>());
  const [, setVersion] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const lastSeqRef = useRef(lastSeq);
  lastSeqRef.current = lastSeq;

  useEffect(() => {
    pages.current = new Map();
    inFlight.current = new Set();
    setError(null);
    setVersion((v) => v + 1);
  }, [runId]);

  const ensure = useCallback(
    (fromSeq: number, toSeq: number) => {
      if (!runId) return;
      const first = Math.floor((Math.max(1, fromSeq) - 1) / EVENT_PAGE_SIZE);
      const last = Math.floor((Math.max(1, toSeq) - 1) / EVENT_PAGE_SIZE);
      for (let p = first; p <= last; p++) {
        const have = pages.current.get(p);
        const pageEnd = Math.min((p + 1) * EVENT_PAGE_SIZE, lastSeqRef.current);
        const complete = have && have.length >= pageEnd - p * EVENT_PAGE_SIZE;
        if (complete || inFlight.current.has(p)) continue;
        inFlight.current.add(p);
        const map = pages.current;
        invoke('run.events', { runId, fromSeq: p * EVENT_PAGE_SIZE + 1, limit: EVENT_PAGE_SIZE }).then(
          (events) => {
            if (pages.current !== map) return;
            inFlight.current.delete(p);
            map.set(p, events);
            setVersion((v) => v + 1);
          },
          (err: unknown) => {
            if (pages.current !== map) return;
            inFlight.current.delete(p);
            setError(describeFailure(err));
          },
        );
      }
    },
    [runId],
  );

  const get = useCallback((seq: number) => {
    const p = Math.floor((seq - 1) / EVENT_PAGE_SIZE);
    const page = pages.current.get(p);
    if (!page) return undefined;
    const first = page[0];
    // Trust the seq, not the position, in case the server skipped nothing but started elsewhere.
    const guess = first ? page[seq - first.seq] : undefined;
    return guess && guess.seq === seq ? guess : page.find((e) => e.seq === seq);
  }, []);

  return { get, ensure, error };
}
