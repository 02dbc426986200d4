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

function session(): Storage | undefined {
  try {
    return window.sessionStorage;
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

function store(key: string, value: unknown): void {
  const storage = session();
  if (!storage) return;
  try {
    storage.setItem(STORAGE_PREFIX + key, JSON.stringify(value));
  } catch {
    storage.removeItem(STORAGE_PREFIX + key); // over the quota: a reload starts it afresh
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

export function useKeptState<T>(key: string, initial: T, options: { persist?: boolean } = {}): [T, (next: T | ((previous: T) => T)) => void] {
  if (options.persist) persisted.add(key);
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
