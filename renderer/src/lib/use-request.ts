/**
 * React hooks over the bridge: `useRequest` loads one channel's answer for a request (null
 * request = nothing to load) and drops answers that arrive after the request changed, so a fast
 * scrubber never shows an older position's state; `useRunAppended` calls back, throttled, when
 * the engine appends events to a run.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { invoke, on } from './bridge.js';
import type { RequestChannel, Requests } from './protocol.js';
import { ProtocolFailure, toProtocolFailure } from './protocol-failure.js';

export interface RequestState<T> {
  /** The last answer, kept while the next request loads (a scrubber does not flash empty). */
  data: T | null;
  /** True when `data` answers the request as it is now, not an earlier one still shown. */
  current: boolean;
  error: ProtocolFailure | null;
  loading: boolean;
  reload: () => void;
}

export function useRequest<C extends RequestChannel>(channel: C, req: Requests[C]['req'] | null): RequestState<Requests[C]['res']> {
  const key = req === null ? null : JSON.stringify(req);
  const [data, setData] = useState<Requests[C]['res'] | null>(null);
  const [dataKey, setDataKey] = useState<string | null>(null);
  const [error, setError] = useState<ProtocolFailure | null>(null);
  const [loading, setLoading] = useState(false);
  const [nonce, setNonce] = useState(0);
  const latest = useRef(0);

  useEffect(() => {
    if (key === null) {
      setData(null);
      setError(null);
      setLoading(false);
      return;
    }
    const ticket = ++latest.current;
    setLoading(true);
    invoke(channel, JSON.parse(key) as Requests[C]['req']).then(
      (res) => {
        if (ticket !== latest.current) return;
        setData(res);
        setDataKey(key);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (ticket !== latest.current) return;
        setError(toProtocolFailure(err));
        setLoading(false);
      },
    );
  }, [channel, key, nonce]);

  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { data, current: key !== null && dataKey === key, error, loading, reload };
}

/**
 * Calls `cb` at most once per `intervalMs` while events are appended to `runId` (leading and
 * trailing edge: the first append reacts at once, a burst ends with one last call).
 */
export function useRunAppended(runId: string | null, cb: () => void, intervalMs = 400): void {
  const cbRef = useRef(cb);
  cbRef.current = cb;
  useEffect(() => {
    if (!runId) return;
    let last = 0;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const fire = () => {
      last = performance.now();
      timer = null;
      cbRef.current();
    };
    const off = on('run.appended', (push) => {
      if (push.runId !== runId) return;
      const wait = last + intervalMs - performance.now();
      if (wait <= 0 && !timer) fire();
      else if (!timer) timer = setTimeout(fire, Math.max(0, wait));
    });
    return () => {
      off();
      if (timer) clearTimeout(timer);
    };
  }, [runId, intervalMs]);
}

/** The current time, re-read every `intervalMs` (for countdowns). */
export function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(id);
  }, [intervalMs]);
  return now;
}
