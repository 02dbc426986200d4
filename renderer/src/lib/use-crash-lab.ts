/**
 * The crash-lab session of one reference run: the CrashLabStatus the engine reports for its lab
 * (from the starting answer, 'crashlab.changed' pushes, and a slow 'crashlab.verdict' poll in case
 * a push was missed), plus the 'process.exited' pushes of the lab's run, in arrival order for the
 * live log.
 *
 * A session outlives the view that shows it: a lab runs for minutes, and a user opens its run's
 * timeline meanwhile ("Open run") or another tab. Kept in a component, the lab vanished from the
 * reference run's Crash lab tab on return, still running on the engine, its verdict never shown
 * (helper 83). Here it stays keyed by the reference run, listening until it finishes or a new lab
 * replaces it.
 */
import { useCallback, useSyncExternalStore } from 'react';
import { invoke, on } from './bridge.js';
import type { CrashLabChaosRequest, CrashLabStartRequest, CrashLabStatus, Pushes } from './protocol.js';
import { describeFailure, toProtocolFailure } from './protocol-failure.js';

export type ExitNotice = Pushes['process.exited'] & { at: number };

interface SessionState {
  status: CrashLabStatus | null;
  exits: ExitNotice[];
  error: string | null;
  busy: boolean;
}

export interface CrashLabSession extends SessionState {
  start: (req: CrashLabStartRequest) => void;
  chaos: (req: CrashLabChaosRequest) => void;
  reset: () => void;
}

const FINISHED = new Set(['done', 'failed']);
const POLL_MS = 1500;
/** Sessions kept: a finished one beyond this many, the oldest first, is dropped with its listeners. */
const MAX_SESSIONS = 20;
const IDLE: SessionState = { status: null, exits: [], error: null, busy: false };

class LabSession {
  state: SessionState = IDLE;
  private readonly listeners = new Set<() => void>();
  /** Bumped by every start and reset: an answer or push of an older lab is dropped. */
  private generation = 0;
  private labWatch: (() => void) | null = null;
  private exitWatch: { runId: string; off: () => void } | null = null;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  snapshot = (): SessionState => this.state;

  begin(run: () => Promise<CrashLabStatus>): void {
    const mine = this.restart({ ...IDLE, busy: true });
    run().then(
      (s) => mine === this.generation && this.update({ status: s, busy: false }),
      (err: unknown) => mine === this.generation && this.update({ error: describeFailure(err), busy: false }),
    );
  }

  reset(): void {
    this.restart(IDLE);
  }

  /**
   * A page opened (or reloaded) while a lab of this run goes on, or in another tab: the engine's
   * newest lab started from the run is shown, unless one was started here meanwhile (helper 90:
   * a reload lost the lab and its verdict, Start enabled beside a lab still running).
   */
  recover(runId: string): void {
    const mine = this.generation;
    invoke('crashlab.ofRun', { runId }).then(
      (lab) => {
        if (lab !== null && mine === this.generation && this.state.status === null && !this.state.busy) this.update({ status: lab });
      },
      () => undefined,
    );
  }

  /** Nothing shows it and nothing of it runs: its lab finished or never started. */
  idle(): boolean {
    const phase = this.state.status?.phase;
    return this.listeners.size === 0 && !this.state.busy && (phase === undefined || FINISHED.has(phase));
  }

  private restart(state: SessionState): number {
    this.labWatch?.();
    this.labWatch = null;
    this.exitWatch?.off();
    this.exitWatch = null;
    this.state = state;
    this.notify();
    return ++this.generation;
  }

  private update(change: Partial<SessionState>): void {
    const before = this.state.status;
    this.state = { ...this.state, ...change };
    const status = this.state.status;
    if (status && status.labId !== before?.labId) this.watchLab(status.labId);
    if (status?.runId && status.runId !== this.exitWatch?.runId) this.watchExits(status.runId);
    // Finished: nothing more to poll for or listen to (the lab's exits are still listened to).
    if (status && FINISHED.has(status.phase) && this.labWatch) {
      this.labWatch();
      this.labWatch = null;
    }
    this.notify();
  }

  private watchLab(labId: string): void {
    this.labWatch?.();
    const mine = this.generation;
    // An answer that came through clears what a failed poll said (a connection lost for a moment
    // left its error above the lab's ✓ for good: helper 90).
    const off = on('crashlab.changed', (s) => {
      if (mine === this.generation && s.labId === labId) this.update({ status: s, error: null });
    });
    // Pushes are the fast path; the poll only closes gaps (a reconnect, a lost frame). A lab the
    // engine says it does not know (it restarted) is given up, said once; any other failure (the
    // server out of reach) is polled through.
    const poll = setInterval(() => {
      invoke('crashlab.verdict', { labId }).then(
        (s) => mine === this.generation && this.update({ status: s, error: null }),
        (err: unknown) => {
          if (mine !== this.generation) return;
          this.update({ error: describeFailure(err) });
          if (toProtocolFailure(err).code === 'not-found' && this.labWatch) {
            this.labWatch();
            this.labWatch = null;
          }
        },
      );
    }, POLL_MS);
    this.labWatch = () => {
      off();
      clearInterval(poll);
    };
  }

  private watchExits(runId: string): void {
    this.exitWatch?.off();
    const off = on('process.exited', (exit) => {
      if (exit.runId !== runId || this.state.exits.some((e) => e.pid === exit.pid)) return;
      this.update({ exits: [...this.state.exits, { ...exit, at: Date.now() }] });
    });
    this.exitWatch = { runId, off };
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }
}

/** Sessions by reference run, for as long as the studio is open. */
const sessions = new Map<string, LabSession>();

function sessionOf(referenceRunId: string): LabSession {
  let session = sessions.get(referenceRunId);
  if (!session) {
    sessions.set(referenceRunId, (session = new LabSession()));
    session.recover(referenceRunId);
    for (const [runId, old] of sessions) {
      if (sessions.size <= MAX_SESSIONS) break;
      if (old.idle()) {
        old.reset();
        sessions.delete(runId);
      }
    }
  }
  return session;
}

export function useCrashLab(referenceRunId: string): CrashLabSession {
  const session = sessionOf(referenceRunId);
  const state = useSyncExternalStore(session.subscribe, session.snapshot);
  return {
    ...state,
    start: useCallback((req: CrashLabStartRequest) => session.begin(() => invoke('crashlab.start', req)), [session]),
    chaos: useCallback((req: CrashLabChaosRequest) => session.begin(() => invoke('crashlab.chaos', req)), [session]),
    reset: useCallback(() => session.reset(), [session]),
  };
}
