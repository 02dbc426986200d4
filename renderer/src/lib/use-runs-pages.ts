/**
 * The runs table's rows, a page at a time from the engine: `runs.list` filters, orders, pages and
 * counts on the engine side (a log may hold 100k runs), so the table knows the total (its scroll
 * height) and asks for the pages its visible rows fall in (`ensure`). A new filter starts over;
 * a bump of `version` (a run appeared or changed status: runs-slice.ts) reads the loaded pages
 * again, at most once per REFRESH_MS. Answers for an older filter are dropped.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { invoke } from './bridge.js';
import { describeFailure } from './protocol-failure.js';
import type { RunsListRequest, RunSummary } from './protocol.js';

export const RUNS_PAGE = 200;
const REFRESH_MS = 500;

export type RunsQuery = Omit<RunsListRequest, 'offset' | 'limit'>;

interface Pages {
  key: string;
  total: number | null;
  /** Page index → its runs, in the engine's order. */
  pages: Record<number, RunSummary[]>;
}

export interface RunsPages {
  /** Runs the filter takes in all; null until the first page answers. */
  total: number | null;
  /** The run at row `index`, or undefined while its page loads. */
  runAt: (index: number) => RunSummary | undefined;
  /** Loads the pages rows `from`..`to` fall in (those not loaded or loading yet). */
  ensure: (from: number, to: number) => void;
  /** Every run the filter takes is loaded (the table may then sort them itself). */
  loadedAll: boolean;
  /** The loaded pages, for measuring columns; changes identity when one arrives. */
  pages: Record<number, RunSummary[]>;
  error: string | null;
}

export function useRunsPages(query: RunsQuery, version: number): RunsPages {
  const key = JSON.stringify(query);
  const [state, setState] = useState<Pages>({ key, total: null, pages: {} });
  const [error, setError] = useState<string | null>(null);
  const inflight = useRef(new Set<string>());
  const current = useRef(key);
  current.current = key;

  const load = useCallback((page: number, forKey: string) => {
    const ticket = `${forKey}#${page}`;
    if (inflight.current.has(ticket)) return;
    inflight.current.add(ticket);
    invoke('runs.list', { ...(JSON.parse(forKey) as RunsQuery), offset: page * RUNS_PAGE, limit: RUNS_PAGE })
      .then(({ runs, total }) => {
        if (current.current !== forKey) return;
        setError(null);
        setState((s) => {
          const pages = s.key === forKey ? { ...s.pages } : {};
          pages[page] = runs;
          // A total that shrank drops the pages past its end.
          for (const p of Object.keys(pages).map(Number)) if (p * RUNS_PAGE >= total && p !== 0) delete pages[p];
          return { key: forKey, total, pages };
        });
      })
      .catch((e: unknown) => {
        if (current.current === forKey) setError(describeFailure(e));
      })
      .finally(() => inflight.current.delete(ticket));
  }, []);

  // A new filter: start over at the first page.
  useEffect(() => {
    setState({ key, total: null, pages: {} });
    load(0, key);
  }, [key, load]);

  // Runs appeared or moved: read again what is loaded, throttled.
  const loaded = useRef<number[]>([]);
  loaded.current = state.key === key ? Object.keys(state.pages).map(Number) : [];
  const firstVersion = useRef(version);
  const refresh = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    // A throttle, not a debounce: a live run's steady pushes must not put the refresh off for ever.
    if (version === firstVersion.current || refresh.current !== null) return;
    refresh.current = setTimeout(() => {
      refresh.current = null;
      for (const page of loaded.current.length ? loaded.current : [0]) load(page, current.current);
    }, REFRESH_MS);
  }, [version, load]);
  useEffect(() => () => void (refresh.current !== null && clearTimeout(refresh.current)), []);

  const pages = state.key === key ? state.pages : {};
  const total = state.key === key ? state.total : null;
  const ensure = useCallback(
    (from: number, to: number) => {
      if (total === null) return;
      const last = Math.min(to, total - 1);
      for (let page = Math.floor(Math.max(0, from) / RUNS_PAGE); page * RUNS_PAGE <= last; page++) if (!pages[page]) load(page, key);
    },
    [pages, total, key, load],
  );
  const runAt = useCallback((index: number) => pages[Math.floor(index / RUNS_PAGE)]?.[index % RUNS_PAGE], [pages]);
  const count = Object.values(pages).reduce((n, p) => n + p.length, 0);
  return { total, runAt, ensure, loadedAll: total !== null && count >= total, pages, error };
}
