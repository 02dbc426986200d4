/**
 * The state of one crash-lab session: the CrashLabStatus the engine reports for it (from the
 * starting answer, 'crashlab.changed' pushes, and a slow 'crashlab.verdict' poll in case a push
 * was missed), plus the 'process.exited' pushes of its run, kept in arrival order for the live log.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { invoke, on } from './bridge.js';
import type { CrashLabChaosRequest, CrashLabStartRequest, CrashLabStatus, Pushes } from './protocol.js';
import { describeFailure } from './protocol-failure.js';

export type ExitNotice = Pushes['process.exited'] & { at: number };

export interface CrashLabSession {
  status: CrashLabStatus | null;
  exits: ExitNotice[];
  error: string | null;
  busy: boolean;
  start: (req: CrashLabStartRequest) => void;
  chaos: (req: CrashLabChaosRequest) => void;
  reset: () => void;
}

const FINISHED = new Set(['done', 'failed']);

export function useCrashLab(): CrashLabSession {
  const [status, setStatus] = useState<CrashLabStatus | null>(null);
  const [exits, setExits] = useState<ExitNotice[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const labId = status?.labId ?? null;
  const runId = status?.runId ?? null;
  const statusRef = useRef(status);
  statusRef.current = status;

  useEffect(() => {
    if (!labId) return;
    const off = on('crashlab.changed', (s) => {
      if (s.labId === labId) setStatus(s);
    });
    // Pushes are the fast path; the poll only closes gaps (a reconnect, a lost frame).
    // An answer for a lab that is no longer shown (a new lab started meanwhile) is dropped.
    let current = true;
    const poll = setInterval(() => {
      if (statusRef.current && FINISHED.has(statusRef.current.phase)) return;
      invoke('crashlab.verdict', { labId }).then(
        (s) => current && setStatus(s),
        (err: unknown) => current && setError(describeFailure(err)),
      );
    }, 1500);
    return () => {
      current = false;
      off();
      clearInterval(poll);
    };
  }, [labId]);

  useEffect(() => {
    if (!runId) return;
    return on('process.exited', (exit) => {
      if (exit.runId === runId) setExits((list) => (list.some((e) => e.pid === exit.pid) ? list : [...list, { ...exit, at: Date.now() }]));
    });
  }, [runId]);

  const generation = useRef(0);
  const begin = useCallback((run: () => Promise<CrashLabStatus>) => {
    const mine = ++generation.current;
    setBusy(true);
    setError(null);
    setExits([]);
    setStatus(null);
    run().then(
      (s) => {
        if (mine !== generation.current) return;
        setStatus(s);
        setBusy(false);
      },
      (err: unknown) => {
        if (mine !== generation.current) return;
        setError(describeFailure(err));
        setBusy(false);
      },
    );
  }, []);

  return {
    status,
    exits,
    error,
    busy,
    start: useCallback((req) => begin(() => invoke('crashlab.start', req)), [begin]),
    chaos: useCallback((req) => begin(() => invoke('crashlab.chaos', req)), [begin]),
    reset: useCallback(() => {
      setStatus(null);
      setExits([]);
      setError(null);
    }, []),
  };
}
