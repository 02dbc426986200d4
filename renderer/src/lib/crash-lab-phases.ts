/**
 * The crash lab's stepper (reference → armed → restart + replay → verifying → verdict), each
 * phase's mark taken from what the lab's record shows happened — never from how far the lab got:
 * a lab whose armed run never crashed has no restart to tick (it was "✓ Restart + replay" beside
 * a "not tested" verdict), and a lab that failed is marked where it stopped, not at its start.
 */
import type { CrashLabPhase, CrashLabProcess, CrashLabStatus } from './protocol.js';

export type PhaseMark = 'done' | 'active' | 'todo' | 'failed' | 'skipped';

export const CRASH_LAB_PHASES: { phase: CrashLabPhase; label: string }[] = [
  { phase: 'reference', label: 'Reference run' },
  { phase: 'armed', label: 'Armed run' },
  { phase: 'resuming', label: 'Restart + replay' },
  { phase: 'verifying', label: 'Verifying' },
  { phase: 'done', label: 'Verdict' },
];

const ended = (p: CrashLabProcess) => p.code !== null || p.signal !== null;

export function crashLabPhaseMarks(status: CrashLabStatus): PhaseMark[] {
  const { processes, verdict } = status;
  const crashed = processes.some((p) => p.signal === 'SIGKILL');
  const pastResumes = status.phase === 'verifying' || verdict !== null;
  // What the record shows was done, and what the lab had no reason to do (nothing crashed).
  const done = [
    processes.length > 0 || verdict !== null,
    processes.length > 0 && ended(processes[0]!),
    crashed && pastResumes && processes.slice(1).some(ended),
    verdict !== null && verdict.tested,
    verdict !== null,
  ];
  const skipped = [false, false, pastResumes && !crashed, verdict !== null && !verdict.tested, false];
  const current = CRASH_LAB_PHASES.findIndex((p) => p.phase === status.phase);
  let failedMarked = false;
  return CRASH_LAB_PHASES.map((_, i) => {
    if (done[i]) return 'done';
    if (skipped[i]) return 'skipped';
    if (status.phase === 'failed') {
      if (failedMarked) return 'todo';
      failedMarked = true;
      return 'failed';
    }
    return i === current ? 'active' : 'todo';
  });
}
