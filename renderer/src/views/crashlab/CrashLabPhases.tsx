/**
 * The lab's progress as a stepper (reference → armed → resuming → verifying → done), with the
 * marks of lib/crash-lab-phases.ts: what the lab did, what it had no reason to do, where it stopped.
 */
import { CRASH_LAB_PHASES, crashLabPhaseMarks } from '../../lib/crash-lab-phases.js';
import type { CrashLabStatus } from '../../lib/protocol.js';

export function CrashLabPhases({ status }: { status: CrashLabStatus }) {
  const marks = crashLabPhaseMarks(status);
  return (
    <ol className="crash-lab-phases" aria-label="Lab phases" data-phase={status.phase} data-lab-id={status.labId}>
      {CRASH_LAB_PHASES.map((p, i) => {
        const state = marks[i]!;
        return (
          <li key={p.phase} className={`phase phase-${state}`} aria-current={state === 'active' ? 'step' : undefined} title={state === 'skipped' ? 'not done: no crash happened' : undefined}>
            <span className="phase-dot" aria-hidden="true">{state === 'done' ? '✓' : state === 'failed' ? '✕' : state === 'skipped' ? '–' : i + 1}</span>
            {p.label}
          </li>
        );
      })}
      <li className="phase-meta">
        <span className="muted">{status.mode === 'chaos' ? 'chaos mode' : `crash at ${status.crashAt ?? '—'}`}</span>
        <span className="muted">lab {status.labId}</span>
      </li>
    </ol>
  );
}
