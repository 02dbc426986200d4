/**
 * State a view keeps while it is not shown. Views mount only while their tab is active (App.tsx),
 * so what a user typed or asked for — an edited mission, the replay diff it produced — was lost
 * by a look at another tab (helper 83). Kept by a key (the run, the view, the field) for as long
 * as the studio is open; an answer that lands while its view is hidden is kept too.
 *
 * Values are compared by identity: a key's first value is stored on first read, so `initial`
 * need not be stable. At most MAX_KEPT values are kept: the least recently set that nothing shows
 * goes first (a studio open for days would otherwise keep every run's diff it ever made).
 *
 * What the user typed (`persist`: an edited mission, the crash lab's form) is also kept in the
 * tab's sessionStorage, so a reload finds it again (helper 90: it came back empty). Answers are
 * not: they are asked again, and may be large.
 */
import { useCallback, useSyncExternalStore } from 'react';

const values = new Map<string, unknown>();
const listeners = new Map<string, Set<() => void>>();
const MAX_KEPT = 240;
/** Keys whose values are also in sessionStorage, under STORAGE_PREFIX + key. */
const persisted = new Set<string>();
const STORAGE_PREFIX = 'reqon.kept:';

/** What of the page's sessionStorage (and window) this needs; typed here so tests can stand in for them. */
interface KeptStorage {
  readonly length: number;
  key(index: number): string | null;
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}
interface PageWindow {
  sessionStorage?: KeptStorage;
  addEventListener?(type: 'pagehide', listener: () => void): void;
}
const page = (): PageWindow | undefined => (globalThis as { window?: PageWindow }).window;

function session(): KeptStorage | undefined {
  try {
    return page()?.sessionStorage;
  } catch {
    return undefined; // storage disabled: kept in memory only
  }
}

function restored<T>(key: string, initial: T): T {
  const text = session()?.getItem(STORAGE_PREFIX + key);
  if (text === null || text === undefined) return initial;
  try {
    return JSON.parse(text) as T;
  } catch {
    return initial;
  }
}

/** Values to write to storage: once typing pauses, and before the page goes (a reload). */
const unwritten = new Map<string, unknown>();
let flushTimer: ReturnType<typeof setTimeout> | undefined;
const FLUSH_AFTER_MS = 300;

function store(key: string, value: unknown): void {
  // Serialising a 3 MB mission on each keystroke took a second per few characters (helper 98).
  unwritten.set(key, value);
  if (flushTimer === undefined) {
    if (unwritten.size === 1) page()?.addEventListener?.('pagehide', flush);
    flushTimer = setTimeout(flush, FLUSH_AFTER_MS);
  }
}

function flush(): void {
  if (flushTimer !== undefined) clearTimeout(flushTimer);
  flushTimer = undefined;
  const storage = session();
  const pending = [...unwritten];
  unwritten.clear();
  if (!storage) return;
  // Over the quota: what was kept with a value (`replay-diff:RUN:…`, the edit's tick beside its
  // text) goes too, so a reload starts the view afresh — never a ticked box over the recorded
  // text, taken for an edit (helper 98). This tab keeps it all in memory meanwhile.
  const failed = new Set<string>();
  for (const [key, value] of pending) {
    try {
      storage.setItem(STORAGE_PREFIX + key, JSON.stringify(value));
    } catch {
      failed.add(STORAGE_PREFIX + key.slice(0, key.lastIndexOf(':') + 1));
    }
  }
  if (failed.size === 0) return;
  for (let i = storage.length - 1; i >= 0; i--) {
    const stored = storage.key(i);
    if (stored !== null && [...failed].some((group) => stored.startsWith(group))) storage.removeItem(stored);
  }
}

/** The value kept under `key` now (for an async answer deciding whether it is still wanted). */
export function keptValue<T>(key: string, initial: T): T {
  if (!values.has(key)) values.set(key, persisted.has(key) ? restored(key, initial) : initial);
  return values.get(key) as T;
}

export function setKept<T>(key: string, next: T | ((previous: T) => T), initial: T): void {
  const value = typeof next === 'function' ? (next as (previous: T) => T)(keptValue(key, initial)) : next;
  if (Object.is(value, values.get(key))) return;
  values.delete(key); // set again at the end: the Map's order is the order of use
  values.set(key, value);
  if (persisted.has(key)) store(key, value);
  for (const listener of listeners.get(key) ?? []) listener();
  for (const old of values.keys()) {
    if (values.size <= MAX_KEPT) break;
    if (!listeners.has(old)) values.delete(old);
  }
}

/** Keeps `key`'s value in the tab's sessionStorage too (what `persist` does). */
export function keepAcrossReloads(key: string): void {
  persisted.add(key);
}

export function useKeptState<T>(key: string, initial: T, options: { persist?: boolean } = {}): [T, (next: T | ((previous: T) => T)) => void] {
  if (options.persist) keepAcrossReloads(key);
  const subscribe = useCallback(
    (listener: () => void) => {
      let set = listeners.get(key);
      if (!set) listeners.set(key, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(key);
      };
    },
    [key],
  );
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const value = useSyncExternalStore(subscribe, () => keptValue(key, initial));
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const set = useCallback((next: T | ((previous: T) => T)) => setKept(key, next, initial), [key]);
  return [value, set];
}
